/*
 * faultdetector: a test-only detector plugin for the farm's detection in worker processes
 * (never shipped; the CLI tests compile it). Its model is nothing: `open` reads no file and
 * names itself "faultdetector 1". `detect` appends the calling process's id to the file LOG (a
 * line each call) and finds one box, the middle half of the image given, scoring 0.9; on an
 * image wider than CRASH_WIDTH (0: never) it dies of SIGSEGV instead, on every attempt. On an
 * image RENAME_WIDTH wide (0: never) it first renames the file RENAME_FROM over RENAME_TO, as
 * someone replacing a photo while the run reads it (nothing when RENAME_FROM is gone).
 *
 * The plugin ABI passes no such settings, so they are compiled in:
 *   -DLOG='"/path/of/the/log"' -DCRASH_WIDTH=100 -DRENAME_WIDTH=120 -DRENAME_FROM='"/a"' -DRENAME_TO='"/b"'
 */
#include "blurfarm_plugin.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef LOG
#define LOG ""
#endif
#ifndef CRASH_WIDTH
#define CRASH_WIDTH 0
#endif
#ifndef RENAME_WIDTH
#define RENAME_WIDTH 0
#define RENAME_FROM ""
#define RENAME_TO ""
#endif

/* What `open` gives as the state: blurfarm asks for one; this detector needs none. */
static int nothing;

static int32_t open_model(
    const char *model_folder, void **state, char *identity, size_t identity_size, char *message, size_t message_size) {
    (void)model_folder;
    (void)message;
    (void)message_size;
    *state = &nothing;
    snprintf(identity, identity_size, "faultdetector 1");
    return BLURFARM_OK;
}

static int32_t detect(
    void *state, const blurfarm_buffer *image, double threshold, int32_t threads, blurfarm_detection *boxes,
    size_t capacity, size_t *count, char *message, size_t message_size) {
    (void)state;
    (void)threshold;
    (void)threads;
    (void)message;
    (void)message_size;
    if (LOG[0]) {
        int fd = open(LOG, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            char text[32];
            int length = snprintf(text, sizeof text, "%d\n", (int)getpid());
            if (write(fd, text, (size_t)length) < 0) { /* the test then finds no line: it says so */ }
            close(fd);
        }
    }
    if (RENAME_WIDTH > 0 && image->rect.width == RENAME_WIDTH) {
        if (rename(RENAME_FROM, RENAME_TO) != 0) { /* gone: renamed by an earlier call */ }
    }
    if (CRASH_WIDTH > 0 && image->rect.width > CRASH_WIDTH) {
        /* A fault, as a broken detector's: raise(SIGSEGV) would return once a handler ran. */
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
    *count = 1;
    if (capacity >= 1) {
        memset(&boxes[0], 0, sizeof boxes[0]);
        const blurfarm_rect r = image->rect;
        boxes[0].x = (double)r.x + (double)r.width / 4.0;
        boxes[0].y = (double)r.y + (double)r.height / 4.0;
        boxes[0].width = (double)r.width / 2.0;
        boxes[0].height = (double)r.height / 2.0;
        boxes[0].score = 0.9;
    }
    return BLURFARM_OK;
}

static void close_model(void *state) { (void)state; }

static const blurfarm_detector table = {
    .abi_version = BLURFARM_DETECTOR_ABI_VERSION,
    .name = "faultdetector",
    .description = "the middle half of every image; a crash on wide ones (a test's)",
    .label = "thing",
    .lowest_threshold = 0.1,
    .open = open_model,
    .detect = detect,
    .close = close_model,
};

__attribute__((visibility("default"))) const blurfarm_detector *blurfarm_detector_entry(void) { return &table; }
