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

/// Starts decoding the JPEG file open at `fd` (read from its start with pread, whatever its
/// offset; the descriptor must outlive the decoder) to 8-bit samples of libjpeg's default
/// output colour space (RGB for YCbCr): NULL on failure. `width`, `height` and `components`
/// are those of the output. Any warning of libjpeg's ("Corrupt JPEG data", "Premature end of
/// JPEG file") fails the decode, as libvips's `fail_on: warning` does.
bf_jpeg_decoder *bf_jpeg_decoder_new(int fd, int *width, int *height, int *components, char *error);

/// Decodes the next `count` rows, row y at `rows + y * stride`: 0, or -1 with `error`.
int bf_jpeg_decoder_read(bf_jpeg_decoder *decoder, unsigned char *rows, size_t stride, int count, char *error);

void bf_jpeg_decoder_free(bf_jpeg_decoder *decoder);

/// Starts encoding a `width` × `height` image of `components` (1 or 3) 8-bit samples a pixel
/// into memory as libvips's `jpegsave` does with `strip` but the ICC profile `icc` (NULL: none):
/// `quality`, full-resolution chroma when `full_chroma` (else libjpeg's 2 × 2), progressive,
/// optimised Huffman tables, a restart marker every `restart_interval` MCUs (0: none).
bf_jpeg_encoder *bf_jpeg_encoder_new(int width, int height, int components, int quality, int full_chroma,
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
