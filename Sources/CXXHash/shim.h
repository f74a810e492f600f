// xxHash (Debian's libxxhash-dev): the pixel checksum of the wire protocol (XXH3-64) and the
// hash of inputs and outputs in the state folder's records (XXH3-128).
#include <xxhash.h>
#if defined(__x86_64__)
// The same functions, choosing SSE2, AVX2 or AVX-512 at run time (the library's plain ones
// are built for the x86-64 baseline): the same values, three times faster here.
#include <xxh_x86dispatch.h>
#endif
