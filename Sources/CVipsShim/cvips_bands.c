// Images read and written band by band: a region reader for the input, and an image whose
// pixels come from rows its producer supplies (see include/cvips_shim.h).
#include "cvips_shim.h"
#include "cvips_lazy.h"

#include <string.h>

int cvips_region_new(VipsImage *image, VipsRegion **out) {
    *out = vips_region_new(image);
    return *out ? 0 : -1;
}

int cvips_region_read_rows(VipsRegion *region, int top, int count, void *out) {
    VipsImage *image = region->im;
    VipsRect rect = { 0, top, image->Xsize, count };
    if (vips_region_prepare(region, &rect)) return -1;
    size_t row_bytes = VIPS_IMAGE_SIZEOF_LINE(image);
    for (int y = 0; y < count; y++) {
        memcpy((unsigned char *)out + (size_t)y * row_bytes, VIPS_REGION_ADDR(region, 0, top + y), row_bytes);
    }
    return 0;
}

/* The ring behind a rows image: it holds where rows are, not the rows. Row y is in slot
 * y % capacity, which points into the samples its supplier passed; the slot is free again once
 * libvips has copied every pixel of the row out of them (each row is asked for once: savers read
 * an image from top to bottom, once). A supplier returns only when no slot points into its
 * samples and no copy from them is under way, so its memory is never read after it returned. */
struct CvipsRows {
    GMutex lock;
    GCond changed;
    int width;
    int height;
    int capacity;
    size_t pixel_bytes;
    size_t row_bytes;
    const unsigned char **slot_data; /* where the row a slot holds is */
    int *slot_row;                   /* the row a slot holds, or -1 when free */
    int *slot_remaining;             /* pixels of that row not yet copied out */
    int copying;                     /* copies from a supplier's samples under way */
    int supplied;                    /* rows supplied so far: 0 ..< supplied have been in the ring */
    int copied;                      /* rows every pixel of which has been copied out */
    int closed;                      /* no more rows come (producer failed) or are wanted (consumer done) */
};

static void cvips_rows_free(VipsImage *image, CvipsRows *rows) {
    (void)image;
    g_mutex_clear(&rows->lock);
    g_cond_clear(&rows->changed);
    g_free(rows->slot_data);
    g_free(rows->slot_row);
    g_free(rows->slot_remaining);
    g_free(rows);
}

static int cvips_rows_generate(VipsRegion *out, void *seq, void *a, void *b, gboolean *stop) {
    (void)seq; (void)b; (void)stop;
    CvipsRows *rows = a;
    const VipsRect *r = &out->valid;
    size_t offset = (size_t)r->left * rows->pixel_bytes;
    size_t bytes = (size_t)r->width * rows->pixel_bytes;
    for (int y = r->top; y < VIPS_RECT_BOTTOM(r); y++) {
        int slot = y % rows->capacity;
        g_mutex_lock(&rows->lock);
        while (rows->supplied <= y && !rows->closed) g_cond_wait(&rows->changed, &rows->lock);
        int closed = rows->closed;
        int ready = !closed && rows->supplied > y && rows->slot_row[slot] == y;
        int missing = rows->supplied <= y;
        const unsigned char *source = rows->slot_data[slot];
        if (ready) rows->copying++;
        g_mutex_unlock(&rows->lock);
        if (!ready) {
            vips_error("cvips_rows", missing ? "row %d was never supplied" : closed ? "the rows were closed before row %d" : "row %d was asked for twice", y);
            return -1;
        }
        /* The supplier waits for `copying` to drop: its samples stay while they are read. */
        memcpy(VIPS_REGION_ADDR(out, r->left, y), source + offset, bytes);
        g_mutex_lock(&rows->lock);
        rows->copying--;
        rows->slot_remaining[slot] -= r->width;
        if (rows->slot_remaining[slot] <= 0) {
            rows->slot_row[slot] = -1;
            rows->copied++;
        }
        g_cond_broadcast(&rows->changed);
        g_mutex_unlock(&rows->lock);
    }
    return 0;
}

int cvips_rows_image(int width, int height, int bands, VipsBandFormat format, VipsInterpretation interpretation,
                     int capacity, VipsImage **out, CvipsRows **rows_out) {
    if (width <= 0 || height <= 0 || capacity <= 0) {
        vips_error("cvips_rows", "bad size");
        return -1;
    }
    VipsImage *image = vips_image_new();
    vips_image_init_fields(image, width, height, bands, format, VIPS_CODING_NONE, interpretation, 1.0, 1.0);
    if (vips_image_pipelinev(image, VIPS_DEMAND_STYLE_THINSTRIP, NULL)) {
        g_object_unref(image);
        return -1;
    }
    CvipsRows *rows = g_new0(CvipsRows, 1);
    g_mutex_init(&rows->lock);
    g_cond_init(&rows->changed);
    rows->width = width;
    rows->height = height;
    rows->capacity = capacity;
    rows->pixel_bytes = VIPS_IMAGE_SIZEOF_PEL(image);
    rows->row_bytes = VIPS_IMAGE_SIZEOF_LINE(image);
    rows->slot_data = g_new0(const unsigned char *, capacity);
    rows->slot_row = g_new(int, capacity);
    rows->slot_remaining = g_new0(int, capacity);
    for (int i = 0; i < capacity; i++) rows->slot_row[i] = -1;
    g_signal_connect(image, "postclose", G_CALLBACK(cvips_rows_free), rows);
    if (vips_image_generate(image, NULL, cvips_rows_generate, NULL, rows, NULL)) {
        g_object_unref(image);
        return -1;
    }
    *out = image;
    *rows_out = rows;
    return 0;
}

int cvips_rows_supply(CvipsRows *rows, const void *samples, int count) {
    g_mutex_lock(&rows->lock);
    int open = 1;
    for (int i = 0; i < count && open; i++) {
        int y = rows->supplied;
        int slot = y % rows->capacity;
        while (rows->slot_row[slot] != -1 && !rows->closed) g_cond_wait(&rows->changed, &rows->lock);
        open = !rows->closed && y < rows->height;
        if (!open) break;
        rows->slot_data[slot] = (const unsigned char *)samples + (size_t)i * rows->row_bytes;
        rows->slot_row[slot] = y;
        rows->slot_remaining[slot] = rows->width;
        rows->supplied = y + 1;
        g_cond_broadcast(&rows->changed);
    }
    /* Back only when nothing reads the samples any more: every row copied out (each supply
     * returns so, so the rows before this one's are all copied), or closed and no copy under way
     * (rows left in the ring then are never read: generate refuses them). A saver that closes
     * the rows once it has the last row has taken them all: success. */
    while (rows->copied < rows->supplied && !(rows->closed && rows->copying == 0)) {
        g_cond_wait(&rows->changed, &rows->lock);
    }
    int taken = open && rows->copied == rows->supplied;
    g_mutex_unlock(&rows->lock);
    return taken ? 0 : -1;
}

void cvips_rows_close(CvipsRows *rows) {
    g_mutex_lock(&rows->lock);
    rows->closed = 1;
    g_cond_broadcast(&rows->changed);
    g_mutex_unlock(&rows->lock);
}
