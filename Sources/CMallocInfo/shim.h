// glibc's allocator statistics (mallinfo2), which the Glibc module does not bring in; for serverapi-soak.
// Linux only (Package.swift): macOS has no <malloc.h>, and mallinfo2 is glibc's.
#if defined(__linux__)
#include <malloc.h>
#endif
