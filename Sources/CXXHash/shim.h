// xxHash (Debian's libxxhash-dev): the hash of inputs and outputs in the state folder's records.
#include <xxhash.h>
