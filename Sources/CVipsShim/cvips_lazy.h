// libvips loaded on first use, not linked: see cvips_lazy.c. Included by the shim's C files
// after <vips/vips.h>; each libvips function they call is named below, so that a call goes
// through the pointer looked up once in the library loaded.
#ifndef CVIPS_LAZY_H
#define CVIPS_LAZY_H

#include <vips/vips.h>

/* The address of libvips's `name`, loading libvips first (aborts when it cannot: Swift's first
 * libvips use goes through cvips_load, which reports that failure, and asks nothing of libvips
 * after it). */
void *cvips_symbol(const char *name);

/* `name` as a pointer to libvips's function, looked up once per call site. */
#define CVIPS_LAZY(name)                                                                          \
    (*({                                                                                          \
        static __typeof__(&name) cvips_lazy_pointer;                                              \
        __typeof__(&name) cvips_lazy_found = __atomic_load_n(&cvips_lazy_pointer, __ATOMIC_ACQUIRE); \
        if (!cvips_lazy_found) {                                                                  \
            cvips_lazy_found = (__typeof__(&name))cvips_symbol(#name);                            \
            __atomic_store_n(&cvips_lazy_pointer, cvips_lazy_found, __ATOMIC_RELEASE);            \
        }                                                                                         \
        cvips_lazy_found;                                                                         \
    }))

#ifndef CVIPS_LAZY_DEFINITIONS
/* A sample's size through the function, not libvips's table (a variable of the library). */
#undef vips_format_sizeof_unsafe
#define vips_format_sizeof_unsafe(format) ((int)vips_format_sizeof(format))
#define vips_autorot CVIPS_LAZY(vips_autorot)
#define vips_call CVIPS_LAZY(vips_call)
#define vips_cast CVIPS_LAZY(vips_cast)
#define vips_colourspace CVIPS_LAZY(vips_colourspace)
#define vips_conv CVIPS_LAZY(vips_conv)
#define vips_copy CVIPS_LAZY(vips_copy)
#define vips_error CVIPS_LAZY(vips_error)
#define vips_error_clear CVIPS_LAZY(vips_error_clear)
#define vips_extract_area CVIPS_LAZY(vips_extract_area)
#define vips_extract_band CVIPS_LAZY(vips_extract_band)
#define vips_foreign_find_load CVIPS_LAZY(vips_foreign_find_load)
#define vips_format_sizeof CVIPS_LAZY(vips_format_sizeof)
#define vips_gaussblur CVIPS_LAZY(vips_gaussblur)
#define vips_heifsave_target CVIPS_LAZY(vips_heifsave_target)
#define vips_icc_transform CVIPS_LAZY(vips_icc_transform)
#define vips_image_generate CVIPS_LAZY(vips_image_generate)
#define vips_image_init_fields CVIPS_LAZY(vips_image_init_fields)
#define vips_image_new CVIPS_LAZY(vips_image_new)
#define vips_image_new_from_buffer CVIPS_LAZY(vips_image_new_from_buffer)
#define vips_image_new_from_file CVIPS_LAZY(vips_image_new_from_file)
#define vips_image_pipelinev CVIPS_LAZY(vips_image_pipelinev)
#define vips_init CVIPS_LAZY(vips_init)
#define vips_jpegsave_target CVIPS_LAZY(vips_jpegsave_target)
#define vips_nickname_find CVIPS_LAZY(vips_nickname_find)
#define vips_pngsave_target CVIPS_LAZY(vips_pngsave_target)
#define vips_premultiply CVIPS_LAZY(vips_premultiply)
#define vips_profile_load CVIPS_LAZY(vips_profile_load)
#define vips_region_new CVIPS_LAZY(vips_region_new)
#define vips_rect_includespoint CVIPS_LAZY(vips_rect_includespoint)
#define vips_region_prepare CVIPS_LAZY(vips_region_prepare)
#define vips_resize CVIPS_LAZY(vips_resize)
#define vips_sharpen CVIPS_LAZY(vips_sharpen)
#define vips_smartcrop CVIPS_LAZY(vips_smartcrop)
#define vips_target_custom_new CVIPS_LAZY(vips_target_custom_new)
#define vips_target_get_type CVIPS_LAZY(vips_target_get_type)
#define vips_thumbnail CVIPS_LAZY(vips_thumbnail)
#define vips_thumbnail_image CVIPS_LAZY(vips_thumbnail_image)
#define vips_tiffsave_target CVIPS_LAZY(vips_tiffsave_target)
#define vips_type_find CVIPS_LAZY(vips_type_find)
#define vips_unpremultiply CVIPS_LAZY(vips_unpremultiply)
#define vips_version CVIPS_LAZY(vips_version)
#define vips_webpsave_target CVIPS_LAZY(vips_webpsave_target)
#endif

#endif
