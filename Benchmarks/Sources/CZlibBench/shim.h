#ifndef SERVERAPIKIT_BENCH_CZLIB_SHIM_H
#define SERVERAPIKIT_BENCH_CZLIB_SHIM_H

// zlib for the WebSocket benchmark's server: it compresses the source's payload once (permessage-deflate with no
// context takeover, so every message is the same bytes). deflateInit2 is a macro, which Swift does not import.

#include <zlib.h>

static inline int czlib_bench_deflate_init_raw(z_streamp stream) {
    return deflateInit2(stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

#endif
