/*
 * A test-only plugin that misbehaves in the way its macros choose (never shipped, never in a
 * plugin folder of the configuration). Compiled by the tests with cc:
 *   -DNAME='"fail"' -DFAIL      run returns BLURFARM_ERROR_FAILED with a message
 *   -DNAME='"crash"' -DCRASH    run writes through a null pointer (SIGSEGV)
 *   -DNAME='"hang"' -DHANG      run never returns (sleeps forever)
 *   -DMESSAGE='"text"'          with FAIL: the message run returns instead of the usual one
 *   -DOVERRUN                   run copies its input, then writes one pixel past its tile
 *   -DSCRIBBLE                  run copies its input, then writes into its input
 *   -DSEAMS                     run copies its input, then blackens its tile's first row: the
 *                               pixels depend on the tiling (what --verify untiled catches)
 *   -DDOMAIN=W,H                domain_of_definition answers W x H pixels at (0, 0)
 *   -DABI=7                     the table claims ABI version 7
 *   -DNO_ENTRY                  no blurfarm_plugin_entry (another function instead)
 *   -DNAME='"x"'                the name in the table (the file may say otherwise)
 *   -DMARKER='"/path"'          a constructor appends a line to /path when the library is loaded
 *   -DPARAMETER='"name"'        one number parameter of that name (0 to 1, default 0)
 *   -DHOLD='"/path"'            run waits while the file /path exists, then copies its input:
 *                               a test holds a tile mid-render for as long as it needs
 * Without FAIL or CRASH, run copies its input.
 */
#include "blurfarm_plugin.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef MARKER
#include <fcntl.h>
#include <unistd.h>

/* Runs at dlopen, before blurfarm sees the table: what an evil library would do. */
__attribute__((constructor)) static void mark(void) {
    int fd = open(MARKER, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (write(fd, "loaded\n", 7) < 0) { /* nothing to do */ }
    close(fd);
}
#endif

#ifndef NAME
#define NAME "misbehave"
#endif
#ifndef MESSAGE
#define MESSAGE "this plugin always fails"
#endif
#ifndef ABI
#define ABI BLURFARM_PLUGIN_ABI_VERSION
#endif

static int32_t run(
    const double *values, const blurfarm_buffer *input, const blurfarm_buffer *output, const blurfarm_rect *image,
    char *message, size_t message_size) {
    (void)values, (void)image, (void)message, (void)message_size;
#if defined(FAIL)
    snprintf(message, message_size, "%s", MESSAGE);
    return BLURFARM_ERROR_FAILED;
#elif defined(CRASH)
    *(volatile float *)0 = input->data[0];
    return BLURFARM_OK;
#elif defined(HANG)
    (void)input, (void)output;
    for (;;) sleep(1000);
    return BLURFARM_OK;
#else
#ifdef HOLD
    while (access(HOLD, F_OK) == 0) usleep(10000);
#endif
    const blurfarm_rect out = output->rect;
    for (int64_t y = 0; y < out.height; y++) {
        memcpy(output->data + y * output->row_stride,
            input->data + (out.y + y - input->rect.y) * input->row_stride + (out.x - input->rect.x) * 4,
            (size_t)out.width * 4 * sizeof(float));
    }
#ifdef OVERRUN
    output->data[(out.height - 1) * output->row_stride + out.width * 4] = 0.5f;
#endif
#ifdef SCRIBBLE
    input->data[0] = 0.5f;
#endif
#ifdef SEAMS
    for (int64_t i = 0; i < out.width; i++) memset(output->data + i * 4, 0, 3 * sizeof(float));
#endif
    return BLURFARM_OK;
#endif
}

#ifdef DOMAIN
static int32_t domain_of_definition(
    const double *values, const blurfarm_rect *input, const blurfarm_rect *image, blurfarm_rect *output) {
    (void)values, (void)input, (void)image;
    const int64_t size[2] = {DOMAIN};
    *output = (blurfarm_rect){.x = 0, .y = 0, .width = size[0], .height = size[1]};
    return BLURFARM_OK;
}
#endif

#ifdef PARAMETER
static const blurfarm_parameter parameters[] = {
    {.name = PARAMETER, .description = "a number", .type = BLURFARM_PARAMETER_NUMBER, .maximum = 1},
};
#endif

static const blurfarm_plugin table = {
    .abi_version = ABI,
    .name = NAME,
    .description = "a test plugin that misbehaves",
    .run = run,
#ifdef PARAMETER
    .parameters = parameters,
    .parameter_count = 1,
#endif
#ifdef DOMAIN
    .domain_of_definition = domain_of_definition,
#endif
};

#ifdef NO_ENTRY
const blurfarm_plugin *some_other_function(void) { return &table; }
#else
const blurfarm_plugin *blurfarm_plugin_entry(void) { return &table; }
#endif
