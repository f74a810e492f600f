// bf_prefetch, declared in ckernels.h: the kernels' one way of asking the memory for bytes
// ahead of their use.
#include "ckernels.h"

void bf_prefetch(const void *p, ptrdiff_t bytes) {
    const char *c = (const char *)p;
    for (ptrdiff_t i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, 0, 3);
}
