#ifndef SERVERAPIKIT_CZLIB_SHIM_H
#define SERVERAPIKIT_CZLIB_SHIM_H

// zlib for permessage-deflate (RFC 7692): raw DEFLATE streams, no zlib or gzip wrapper. deflateInit2 and
// inflateInit2 are macros (they pass zlib's version and the size of z_stream), which Swift does not import.

#include <zlib.h>

/// deflateInit2 for a raw DEFLATE stream with a window of 2^window_bits bytes (9–15: zlib refuses 8 for raw
/// streams).
static inline int czlib_deflate_init_raw(z_streamp stream, int level, int window_bits, int mem_level) {
    return deflateInit2(stream, level, Z_DEFLATED, -window_bits, mem_level, Z_DEFAULT_STRATEGY);
}

/// inflateInit2 for a raw DEFLATE stream with a window of 2^window_bits bytes (8–15).
static inline int czlib_inflate_init_raw(z_streamp stream, int window_bits) {
    return inflateInit2(stream, -window_bits);
}

#endif
