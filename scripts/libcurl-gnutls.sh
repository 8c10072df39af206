#!/usr/bin/env bash
# Unpacks libcurl's GnuTLS flavour with HTTP/3 (bookworm-backports' libcurl3-gnutls 8.14, built with ngtcp2 and
# nghttp3, and those two libraries) into .build/libcurl-gnutls/ without installing anything, and prints what a build
# against it needs, as `export` lines for eval:
#
#   eval "$(scripts/libcurl-gnutls.sh)"
#   swift build --scratch-path .build-gnutls ...     # links libcurl-gnutls.so.4
#   swift test --scratch-path .build-gnutls ...      # and loads the unpacked one, not the system's
#
#   PKG_CONFIG_PATH  a folder whose libcurl.pc points the linker at the unpacked library: the system-library target
#                    CCurl asks pkg-config for `libcurl` and finds this one first
#   LD_LIBRARY_PATH  the unpacked libraries: the binary needs libcurl-gnutls.so.4 and Debian 12 has its own (7.88,
#                    without HTTP/3) in /usr/lib; the linker looks there too for ngtcp2 and nghttp3, which
#                    libcurl-gnutls needs (a RUNPATH would not reach them: it serves direct dependencies only)
#
# The headers are the system's (libcurl4-openssl-dev, 7.88): the two flavours share them, and 7.88 declares
# everything the package uses of 8.14 (CURL_HTTP_VERSION_3ONLY, the Alt-Svc options, CURL_VERSION_HTTP3); the
# OpenSSL build stays the default. The GnuTLS flavour exports its symbols versioned CURL_GNUTLS_3, so a binary linked
# against libcurl.so.4 (OpenSSL) cannot load it through LD_LIBRARY_PATH: it needs a build of its own, hence the
# separate scratch path.
#
#   scripts/libcurl-gnutls.sh            # the export lines
#   scripts/libcurl-gnutls.sh --lib-dir  # only the folder of the unpacked libraries
#
# Adds the bookworm-backports suite to apt's sources when it is missing, as scripts/libcurl-backports.sh does, and
# needs apt-get as root for that. Exits 3 when the system is not Debian 12 (on Debian 13, install
# libcurl4-gnutls-dev instead: its libcurl has HTTP/3 and pkg-config finds it as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="$(pwd)/.build/libcurl-gnutls"
PACKAGES=(libcurl3-gnutls libngtcp2-16 libngtcp2-crypto-gnutls8 libnghttp3-9)

find_lib() { find "$DEST" -name 'libcurl-gnutls.so.4' -printf '%h\n' 2>/dev/null | head -n 1 || true; }

LIBDIR=$(find_lib)
if [ -z "$LIBDIR" ] || [ ! -f "$DEST/pkgconfig/libcurl.pc" ]; then
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        uri=$(awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ { print u; exit }' \
            /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
        [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' \
            /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
        if [ -z "$uri" ]; then
            echo "libcurl-gnutls.sh: apt has no bookworm suite: not Debian 12 (on Debian 13: apt-get install" \
                "libcurl4-gnutls-dev)" >&2
            exit 3
        fi
        echo "deb $uri bookworm-backports main" >/etc/apt/sources.list.d/bookworm-backports.list
    fi
    apt-get update -qq
    work=$(mktemp -d)
    chown _apt "$work" 2>/dev/null || true
    (cd "$work" && apt-get download -qq -t bookworm-backports "${PACKAGES[@]}" >&2)
    rm -rf "$DEST"
    mkdir -p "$DEST/pkgconfig"
    for deb in "$work"/*.deb; do dpkg -x "$deb" "$DEST"; done
    version=$(dpkg-deb -f "$work"/libcurl3-gnutls_*.deb Version)
    rm -rf "$work"
    LIBDIR=$(find_lib)
    [ -n "$LIBDIR" ] || { echo "libcurl-gnutls.sh: the package held no libcurl-gnutls.so.4" >&2; exit 1; }
    # The name the linker looks for (-lcurl, also the module map's `link "curl"`), for this library: the binary then
    # needs its soname, libcurl-gnutls.so.4, and binds to its CURL_GNUTLS_3 symbols.
    ln -sf libcurl-gnutls.so.4 "$LIBDIR/libcurl.so"
    cflags=$(pkg-config --cflags libcurl 2>/dev/null || true)
    cat >"$DEST/pkgconfig/libcurl.pc" <<EOF
libdir=$LIBDIR
Name: libcurl
Description: libcurl's GnuTLS flavour from bookworm-backports, unpacked by scripts/libcurl-gnutls.sh
Version: ${version%%-*}
Libs: -L\${libdir} -lcurl
Cflags: $cflags
EOF
fi
# SwiftPM reads .pc files itself and, unlike pkg-config, keeps the system folder of zlib.pc's `-L`: on a link line
# where CZlib's flags come before CCurl's (Benchmarks' serverapi-transport-bench), `-lcurl` found the OpenSSL
# flavour's libcurl.so there. This zlib.pc, found first, has no `-L`.
if [ ! -f "$DEST/pkgconfig/zlib.pc" ]; then
    cat >"$DEST/pkgconfig/zlib.pc" <<EOF
Name: zlib
Description: the system's zlib, without its -L (scripts/libcurl-gnutls.sh)
Version: $(pkg-config --modversion zlib 2>/dev/null || echo 1)
Libs: -lz
Cflags:
EOF
fi
if [ "${1:-}" = "--lib-dir" ]; then
    echo "$LIBDIR"
else
    echo "export PKG_CONFIG_PATH=$DEST/pkgconfig"
    echo "export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
