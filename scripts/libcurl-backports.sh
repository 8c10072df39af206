#!/usr/bin/env bash
# Prints the folder of a second libcurl for the conformance suite: Debian 12's bookworm-backports build (8.14),
# unpacked into .build/libcurl-backports/ without installing it (the system keeps its own libcurl, 7.88, which the
# package builds against). Run a test binary with LD_LIBRARY_PATH set to the printed folder and it loads this
# libcurl instead; CurlTransport.libcurlVersion says which one it loaded.
#
# Adds the bookworm-backports suite to apt's sources when it is missing, from the mirror the bookworm suite already
# uses, and needs apt-get as root for that. Exits 3 when the system is not Debian 12 (no bookworm suite in apt's
# sources): there is no such second library to test.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="$(pwd)/.build/libcurl-backports"

find_lib() { find "$DEST" -name 'libcurl.so.4' -printf '%h\n' 2>/dev/null | head -n 1 || true; }

LIBDIR=$(find_lib)
if [ -z "$LIBDIR" ]; then
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        # The mirror of the bookworm suite, in either format of apt's sources.
        uri=$(awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ { print u; exit }' \
            /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
        [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' \
            /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
        if [ -z "$uri" ]; then
            echo "libcurl-backports.sh: apt has no bookworm suite: not Debian 12, no backports libcurl to test" >&2
            exit 3
        fi
        echo "deb $uri bookworm-backports main" >/etc/apt/sources.list.d/bookworm-backports.list
    fi
    apt-get update -qq
    work=$(mktemp -d)
    # apt downloads as its own user where it can write.
    chown _apt "$work" 2>/dev/null || true
    (cd "$work" && apt-get download -qq -t bookworm-backports libcurl4 >&2)
    mkdir -p "$DEST"
    dpkg -x "$work"/libcurl4_*.deb "$DEST"
    rm -rf "$work"
    LIBDIR=$(find_lib)
    [ -n "$LIBDIR" ] || { echo "libcurl-backports.sh: the package held no libcurl.so.4" >&2; exit 1; }
fi
echo "$LIBDIR"
