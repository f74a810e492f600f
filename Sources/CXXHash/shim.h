// xxHash (Debian's libxxhash-dev): the pixel checksum of the wire protocol is XXH3-64.
#include <xxhash.h>
