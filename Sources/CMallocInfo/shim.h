// glibc's allocator statistics (mallinfo2), which the Glibc module does not bring in; for serverapi-soak.
#include <malloc.h>
