/*
 * fault: a test-only plugin for testing the farm's failure handling (never shipped, never in a
 * plugin folder of the shipped configuration; FaultPlugin in the CLI tests compiles it). It copies
 * its input, except on the tiles whose output holds the pixel (x, y), where:
 *
 *   crash: true   the process dies of SIGSEGV, on every attempt;
 *   stall: true   the first process to get there creates the file MARKER (exclusively),
 *                 writes its pid into it and sleeps until it is killed, its heartbeats going
 *                 on (the worker's own thread sends them); every later attempt finds the file
 *                 and copies. A test waits for the file and kills, stops or lets the task
 *                 timeout take the process it names.
 *
 * The plugin ABI passes numbers only, so the marker's path is compiled in:
 *   -DMARKER='"/path/of/the/marker"'
 */
#include "blurfarm_plugin.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef MARKER
#define MARKER ""
#endif

enum { X, Y, CRASH, STALL };

static const blurfarm_parameter parameters[] = {
    {.name = "x", .description = "column of the pixel", .type = BLURFARM_PARAMETER_INTEGER, .minimum = -1e9, .maximum = 1e9},
    {.name = "y", .description = "row of the pixel", .type = BLURFARM_PARAMETER_INTEGER, .minimum = -1e9, .maximum = 1e9},
    {.name = "crash", .description = "die of SIGSEGV on the tile holding the pixel, every time",
        .type = BLURFARM_PARAMETER_BOOLEAN},
    {.name = "stall", .description = "sleep until killed on the first attempt at the tile holding the pixel",
        .type = BLURFARM_PARAMETER_BOOLEAN},
};

/* Creates MARKER with this process's pid in it; 0 when it exists already (or cannot be made). */
static int claim_marker(void) {
    int fd = open(MARKER, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return 0;
    char text[32];
    int length = snprintf(text, sizeof text, "%d\n", (int)getpid());
    if (write(fd, text, (size_t)length) < 0) { /* the test then waits in vain: it says so */ }
    close(fd);
    return 1;
}

static int32_t run(
    const double *values, const blurfarm_buffer *input, const blurfarm_buffer *output, const blurfarm_rect *image,
    char *message, size_t message_size) {
    (void)image, (void)message, (void)message_size;
    const blurfarm_rect out = output->rect;
    const int64_t x = (int64_t)values[X], y = (int64_t)values[Y];
    if (x >= out.x && x < out.x + out.width && y >= out.y && y < out.y + out.height) {
        if (values[CRASH] != 0) {
            signal(SIGSEGV, SIG_DFL);
            raise(SIGSEGV);
        }
        if (values[STALL] != 0 && claim_marker()) {
            for (;;) sleep(3600);
        }
    }
    /* No region of interest: the input holds exactly the output's rectangle. */
    for (int64_t row = 0; row < out.height; row++) {
        const float *source = input->data + (out.y + row - input->rect.y) * input->row_stride + (out.x - input->rect.x) * 4;
        memcpy(output->data + row * output->row_stride, source, (size_t)out.width * 4 * sizeof(float));
    }
    return BLURFARM_OK;
}

static const blurfarm_plugin table = {
    .abi_version = BLURFARM_PLUGIN_ABI_VERSION,
    .name = "fault",
    .description = "test only: copies the image, but crashes or stalls on the tile holding one pixel",
    .parameters = parameters,
    .parameter_count = sizeof parameters / sizeof parameters[0],
    .run = run,
};

const blurfarm_plugin *blurfarm_plugin_entry(void) { return &table; }
