// xxHash (Debian's libxxhash-dev): the pixel checksum of the wire protocol (XXH3-64) and the
// hash of inputs and outputs in the state folder's records (XXH3-128).
#include <xxhash.h>
