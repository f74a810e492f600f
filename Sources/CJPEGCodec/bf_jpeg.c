// See include/bf_jpeg.h.
#include "bf_jpeg.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jpeglib.h>
#include <jerror.h>

/* libjpeg's errors and warnings: the message kept, a jump back to the call that failed. */
struct bf_jpeg_errors {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char message[BF_JPEG_MESSAGE];
};

static void bf_jpeg_error_exit(j_common_ptr cinfo) {
    struct bf_jpeg_errors *errors = (struct bf_jpeg_errors *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    snprintf(errors->message, sizeof errors->message, "%s", text);
    longjmp(errors->jump, 1);
}

/* A warning (msg_level < 0) fails as an error does: libvips's `fail_on: warning`. Trace
 * messages are dropped. */
static void bf_jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level < 0) bf_jpeg_error_exit(cinfo);
}

static void bf_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void bf_jpeg_errors_init(struct bf_jpeg_errors *errors) {
    jpeg_std_error(&errors->pub);
    errors->pub.error_exit = bf_jpeg_error_exit;
    errors->pub.emit_message = bf_jpeg_emit_message;
    errors->pub.output_message = bf_jpeg_output_message;
    errors->message[0] = 0;
}

static void bf_jpeg_copy_message(char *error, const char *message) {
    if (error) snprintf(error, BF_JPEG_MESSAGE, "%s", message);
}

struct bf_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    struct bf_jpeg_errors errors;
    struct jpeg_source_mgr source;
    int fd;
    off_t offset; /* where the next read starts */
    unsigned char buffer[65536];
};

/* The source: the file read with pread from its start, 64 KiB at a time, whatever the
 * descriptor's offset. Its end, or a read that fails, is libjpeg's "Premature end of JPEG
 * file" (a warning: a failure here), as at the end of libvips's own source. */
static void bf_jpeg_source_init(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean bf_jpeg_source_fill(j_decompress_ptr cinfo) {
    bf_jpeg_decoder *decoder = (bf_jpeg_decoder *)cinfo;
    ssize_t n;
    while ((n = pread(decoder->fd, decoder->buffer, sizeof decoder->buffer, decoder->offset)) < 0 && errno == EINTR) {}
    if (n < 0) ERREXIT(cinfo, JERR_FILE_READ);
    if (n == 0) {
        WARNMS(cinfo, JWRN_JPEG_EOF);
        decoder->buffer[0] = 0xFF; /* a fake end of image */
        decoder->buffer[1] = JPEG_EOI;
        n = 2;
    } else {
        decoder->offset += n;
    }
    decoder->source.next_input_byte = decoder->buffer;
    decoder->source.bytes_in_buffer = (size_t)n;
    return TRUE;
}

static void bf_jpeg_source_skip(j_decompress_ptr cinfo, long count) {
    bf_jpeg_decoder *decoder = (bf_jpeg_decoder *)cinfo;
    if (count <= 0) return;
    while (count > (long)decoder->source.bytes_in_buffer) {
        count -= (long)decoder->source.bytes_in_buffer;
        bf_jpeg_source_fill(cinfo);
    }
    decoder->source.next_input_byte += count;
    decoder->source.bytes_in_buffer -= (size_t)count;
}

static void bf_jpeg_source_term(j_decompress_ptr cinfo) { (void)cinfo; }

bf_jpeg_decoder *bf_jpeg_decoder_new(int fd, bf_jpeg_header *header, char *error) {
    bf_jpeg_decoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) {
        bf_jpeg_copy_message(error, "out of memory");
        return NULL;
    }
    bf_jpeg_errors_init(&decoder->errors);
    decoder->cinfo.err = &decoder->errors.pub;
    decoder->fd = fd;
    if (setjmp(decoder->errors.jump)) {
        bf_jpeg_copy_message(error, decoder->errors.message);
        jpeg_destroy_decompress(&decoder->cinfo);
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    decoder->source.init_source = bf_jpeg_source_init;
    decoder->source.fill_input_buffer = bf_jpeg_source_fill;
    decoder->source.skip_input_data = bf_jpeg_source_skip;
    decoder->source.resync_to_restart = jpeg_resync_to_restart;
    decoder->source.term_source = bf_jpeg_source_term;
    decoder->cinfo.src = &decoder->source;
    /* The markers libvips's jpegload reads: EXIF and XMP, ICC, IPTC, Adobe. */
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 1, 0xffff);
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 2, 0xffff);
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 13, 0xffff);
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 14, 0xffff);
    jpeg_read_header(&decoder->cinfo, TRUE);
    header->width = (int)decoder->cinfo.image_width;
    header->height = (int)decoder->cinfo.image_height;
    header->components = decoder->cinfo.num_components;
    header->colour_space = decoder->cinfo.jpeg_color_space == JCS_YCbCr ? BF_JPEG_YCBCR
                           : decoder->cinfo.jpeg_color_space == JCS_RGB ? BF_JPEG_RGB
                                                                        : BF_JPEG_OTHER_COLOURS;
    header->precision = decoder->cinfo.data_precision;
    return decoder;
}

int bf_jpeg_decoder_marker(bf_jpeg_decoder *decoder, int index, int *marker, const unsigned char **data,
                           size_t *size) {
    jpeg_saved_marker_ptr saved = decoder->cinfo.marker_list;
    for (int i = 0; saved && i < index; i++) saved = saved->next;
    if (!saved) return -1;
    *marker = saved->marker;
    *data = saved->data;
    *size = saved->data_length;
    return 0;
}

int bf_jpeg_decoder_start(bf_jpeg_decoder *decoder, int shrink, int *width, int *height, char *error) {
    if (setjmp(decoder->errors.jump)) {
        bf_jpeg_copy_message(error, decoder->errors.message);
        return -1;
    }
    /* libvips's jpegload sets nothing else: libjpeg's defaults, and its shrink-on-load's scale. */
    decoder->cinfo.scale_num = 1;
    decoder->cinfo.scale_denom = (unsigned int)shrink;
    jpeg_start_decompress(&decoder->cinfo);
    *width = (int)decoder->cinfo.output_width;
    *height = (int)decoder->cinfo.output_height;
    return 0;
}

int bf_jpeg_decoder_read(bf_jpeg_decoder *decoder, unsigned char *rows, size_t stride, int count, char *error) {
    if (setjmp(decoder->errors.jump)) {
        bf_jpeg_copy_message(error, decoder->errors.message);
        return -1;
    }
    for (int y = 0; y < count;) {
        if (decoder->cinfo.output_scanline >= decoder->cinfo.output_height) {
            bf_jpeg_copy_message(error, "more rows asked for than the image has");
            return -1;
        }
        JSAMPROW row = rows + (size_t)y * stride;
        y += (int)jpeg_read_scanlines(&decoder->cinfo, &row, 1);
    }
    return 0;
}

void bf_jpeg_decoder_free(bf_jpeg_decoder *decoder) {
    if (!decoder) return;
    jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder);
}

struct bf_jpeg_encoder {
    struct jpeg_compress_struct cinfo;
    struct bf_jpeg_errors errors;
    struct jpeg_destination_mgr destination;
    unsigned char *bytes; /* the file so far: `size` bytes written of `capacity` */
    size_t size;
    size_t capacity;
};

/* The destination: one buffer grown by doubling, freed with the encoder. */
static void bf_jpeg_destination_init(j_compress_ptr cinfo) {
    bf_jpeg_encoder *encoder = (bf_jpeg_encoder *)cinfo;
    encoder->destination.next_output_byte = encoder->bytes;
    encoder->destination.free_in_buffer = encoder->capacity;
}

static boolean bf_jpeg_destination_empty(j_compress_ptr cinfo) {
    bf_jpeg_encoder *encoder = (bf_jpeg_encoder *)cinfo;
    size_t used = encoder->capacity; /* libjpeg calls this when the buffer is full */
    unsigned char *grown = realloc(encoder->bytes, encoder->capacity * 2);
    if (!grown) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    encoder->bytes = grown;
    encoder->capacity *= 2;
    encoder->destination.next_output_byte = grown + used;
    encoder->destination.free_in_buffer = encoder->capacity - used;
    return TRUE;
}

static void bf_jpeg_destination_term(j_compress_ptr cinfo) {
    bf_jpeg_encoder *encoder = (bf_jpeg_encoder *)cinfo;
    encoder->size = encoder->capacity - encoder->destination.free_in_buffer;
}

bf_jpeg_encoder *bf_jpeg_encoder_new(int width, int height, int quality, int full_chroma,
                                     int progressive, int optimize_coding, int restart_interval,
                                     const unsigned char *icc, size_t icc_size, char *error) {
    bf_jpeg_encoder *encoder = calloc(1, sizeof *encoder);
    if (!encoder) {
        bf_jpeg_copy_message(error, "out of memory");
        return NULL;
    }
    bf_jpeg_errors_init(&encoder->errors);
    encoder->cinfo.err = &encoder->errors.pub;
    if (setjmp(encoder->errors.jump)) {
        bf_jpeg_copy_message(error, encoder->errors.message);
        bf_jpeg_encoder_free(encoder);
        return NULL;
    }
    jpeg_create_compress(&encoder->cinfo);
    /* About a tenth of the samples: a photo at quality 90 needs about that. */
    encoder->capacity = (size_t)width * (size_t)height * 3 / 10 + 4096;
    encoder->bytes = malloc(encoder->capacity);
    if (!encoder->bytes) ERREXIT1(&encoder->cinfo, JERR_OUT_OF_MEMORY, 10);
    encoder->destination.init_destination = bf_jpeg_destination_init;
    encoder->destination.empty_output_buffer = bf_jpeg_destination_empty;
    encoder->destination.term_destination = bf_jpeg_destination_term;
    encoder->cinfo.dest = &encoder->destination;
    struct jpeg_compress_struct *cinfo = &encoder->cinfo;
    cinfo->image_width = (JDIMENSION)width;
    cinfo->image_height = (JDIMENSION)height;
    cinfo->input_components = 3;
    cinfo->in_color_space = JCS_RGB;
    /* libvips 8.14's write_vips(), in its order. */
    jpeg_set_defaults(cinfo);
    cinfo->optimize_coding = optimize_coding ? TRUE : FALSE;
    if (restart_interval > 0) cinfo->restart_interval = (unsigned int)restart_interval;
    jpeg_set_quality(cinfo, quality, TRUE);
    if (progressive) jpeg_simple_progression(cinfo);
    if (full_chroma) {
        for (int i = 0; i < 3; i++) {
            cinfo->comp_info[i].h_samp_factor = 1;
            cinfo->comp_info[i].v_samp_factor = 1;
        }
    }
    /* libvips built with libexif (Debian's) never writes a JFIF header. */
    cinfo->write_JFIF_header = FALSE;
    jpeg_start_compress(cinfo, TRUE);
    if (icc && icc_size > 0) jpeg_write_icc_profile(cinfo, icc, (unsigned int)icc_size);
    return encoder;
}

int bf_jpeg_encoder_write(bf_jpeg_encoder *encoder, const unsigned char *rows, size_t stride, int count,
                          char *error) {
    if (setjmp(encoder->errors.jump)) {
        bf_jpeg_copy_message(error, encoder->errors.message);
        return -1;
    }
    for (int y = 0; y < count;) {
        if (encoder->cinfo.next_scanline >= encoder->cinfo.image_height) {
            bf_jpeg_copy_message(error, "more rows given than the image has");
            return -1;
        }
        JSAMPROW row = (JSAMPROW)(rows + (size_t)y * stride);
        y += (int)jpeg_write_scanlines(&encoder->cinfo, &row, 1);
    }
    return 0;
}

int bf_jpeg_encoder_finish(bf_jpeg_encoder *encoder, const unsigned char **bytes, size_t *size, char *error) {
    if (setjmp(encoder->errors.jump)) {
        bf_jpeg_copy_message(error, encoder->errors.message);
        return -1;
    }
    if (encoder->cinfo.next_scanline < encoder->cinfo.image_height) {
        bf_jpeg_copy_message(error, "the encoder stopped before the last row");
        return -1;
    }
    jpeg_finish_compress(&encoder->cinfo);
    *bytes = encoder->bytes;
    *size = encoder->size;
    return 0;
}

void bf_jpeg_encoder_free(bf_jpeg_encoder *encoder) {
    if (!encoder) return;
    jpeg_destroy_compress(&encoder->cinfo);
    free(encoder->bytes);
    free(encoder);
}
