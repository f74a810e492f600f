// The dynamic loader's search path, which Swift cannot ask for: dlinfo's RTLD_DI_SERINFO fills a
// variable-sized Dl_serinfo.
#define _GNU_SOURCE
#include "csystem_shims.h"
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

char *blurfarm_library_search_path(void) {
    void *self = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (!self) return NULL;
    Dl_serinfo size;
    char *joined = NULL;
    if (dlinfo(self, RTLD_DI_SERINFOSIZE, &size) == 0) {
        Dl_serinfo *info = malloc(size.dls_size);
        if (info && dlinfo(self, RTLD_DI_SERINFOSIZE, info) == 0 && dlinfo(self, RTLD_DI_SERINFO, info) == 0) {
            size_t length = 1;
            for (unsigned i = 0; i < info->dls_cnt; i++) length += strlen(info->dls_serpath[i].dls_name) + 1;
            joined = malloc(length);
            if (joined) {
                joined[0] = 0;
                for (unsigned i = 0; i < info->dls_cnt; i++) {
                    strcat(joined, info->dls_serpath[i].dls_name);
                    strcat(joined, "\n");
                }
            }
        }
        free(info);
    }
    dlclose(self);
    return joined;
}
