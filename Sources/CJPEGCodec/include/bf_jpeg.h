// 8-bit JPEG straight through libjpeg(-turbo), Debian's, the library libvips links: rows
// decoded into the caller's memory and encoded from it on the calling thread, no thread and
// no copy between. The settings are libvips 8.14's (`jpegload`, `jpegsave`), so the pixels
// and the bytes are libvips's for the cases BlurfarmImageIO sends here (JPEGCodec.swift).
// Every call reports a failure as its return value and a message in `error` (a
// `BF_JPEG_MESSAGE` byte buffer); libjpeg's longjmp never crosses into Swift.
#ifndef BF_JPEG_H
#define BF_JPEG_H

#include <stddef.h>

#define BF_JPEG_MESSAGE 256

typedef struct bf_jpeg_decoder bf_jpeg_decoder;
typedef struct bf_jpeg_encoder bf_jpeg_encoder;

/// What a JPEG's header says.
typedef struct {
    int width;
    int height;
    int components;   /* in the file: 1 grey, 3 colour, 4 CMYK or YCCK */
    int colour_space; /* BF_JPEG_YCBCR, BF_JPEG_RGB or BF_JPEG_OTHER_COLOURS */
    int precision;    /* bits a sample */
} bf_jpeg_header;

#define BF_JPEG_YCBCR 1
#define BF_JPEG_RGB 2
#define BF_JPEG_OTHER_COLOURS 3

/// Reads the header of the JPEG file open at `fd` (read from its start with pread, whatever
/// its offset; the descriptor must outlive the decoder), keeping the APP1, APP2, APP13 and
/// APP14 markers libvips's `jpegload` reads: NULL on failure. Any warning of libjpeg's
/// ("Corrupt JPEG data", "Premature end of JPEG file") fails, as libvips's `fail_on: warning`
/// does, here and in the calls below.
bf_jpeg_decoder *bf_jpeg_decoder_new(int fd, bf_jpeg_header *header, char *error);

/// The `index`th marker kept (0 first, in the file's order): 0 with its code (0xE1 for APP1 ...)
/// and its payload (the decoder's), or -1 past the last.
int bf_jpeg_decoder_marker(bf_jpeg_decoder *decoder, int index, int *marker, const unsigned char **data,
                           size_t *size);

/// Starts decoding to 8-bit samples of libjpeg's default output colour space (RGB for YCbCr
/// and RGB files), as libvips's `jpegload` does, scaled by 1/`shrink` (1, 2, 4 or 8: libjpeg's
/// DCT scaling, libvips's `shrink`), and gives the decoded size: 0, or -1 with `error`. A
/// progressive file is read whole here.
int bf_jpeg_decoder_start(bf_jpeg_decoder *decoder, int shrink, int *width, int *height, char *error);

/// Decodes the next `count` rows, row y at `rows + y * stride`: 0, or -1 with `error`.
int bf_jpeg_decoder_read(bf_jpeg_decoder *decoder, unsigned char *rows, size_t stride, int count, char *error);

void bf_jpeg_decoder_free(bf_jpeg_decoder *decoder);

/// Starts encoding a `width` × `height` image of 8-bit RGB pixels
/// into memory as libvips's `jpegsave` does with `strip` but the ICC profile `icc` (NULL: none):
/// `quality`, full-resolution chroma when `full_chroma` (else libjpeg's 2 × 2), progressive,
/// optimised Huffman tables, a restart marker every `restart_interval` MCUs (0: none).
bf_jpeg_encoder *bf_jpeg_encoder_new(int width, int height, int quality, int full_chroma,
                                     int progressive, int optimize_coding, int restart_interval,
                                     const unsigned char *icc, size_t icc_size, char *error);

/// Encodes the next `count` rows, row y at `rows + y * stride`: 0, or -1 with `error`.
int bf_jpeg_encoder_write(bf_jpeg_encoder *encoder, const unsigned char *rows, size_t stride, int count,
                          char *error);

/// Finishes the file (every row written): 0 with the bytes at `*bytes` (`*size` of them, the
/// encoder's until it is freed), or -1 with `error`.
int bf_jpeg_encoder_finish(bf_jpeg_encoder *encoder, const unsigned char **bytes, size_t *size, char *error);

void bf_jpeg_encoder_free(bf_jpeg_encoder *encoder);

#endif
