#!/usr/bin/env bash
# Runs the whole test suite, the way CI does: installs the system packages the build needs when they
# are missing (as root, with apt), builds with warnings as errors, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

# The curl backend (Backends/CCurl) builds against libcurl, found through pkg-config; its TLS tests
# make certificates with openssl.
missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libcurl; then missing+=(libcurl4-openssl-dev); fi
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
        echo "test.sh: missing system packages (${missing[*]}) and no apt-get as root to install them" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build "$@"
