#!/usr/bin/env bash
# Builds the `sapi` to install, in .build-static/release/, for start-up time (the figures are in the Performance
# article):
# - release, with the Swift runtime and Foundation linked statically (`--static-swift-stdlib`);
# - libstdc++ linked statically too where the system has libstdc++.a (Debian's libstdc++-12-dev, which the Swift
#   toolchain itself needs): the toolchain has no flag for it, so the link is pointed at a folder holding only
#   libstdc++.a, which the linker then takes for `-lstdc++`;
# - `-disable-concrete-type-metadata-mangled-name-accessors`: the metadata of a generic type (`Set<Int>`) is made by
#   a call with its conformances passed in, not from its mangled name, which costs the runtime a scan of every
#   conformance record in the binary for each conformance it checks the first time. The same code otherwise.
# - no dynamic symbols of its own (a version script making every symbol local): the toolchain links with
#   `-export-dynamic`, which lists the 4,900 public names of the package's modules in the dynamic symbol table, where
#   nothing looks them up, but where the dynamic loader looks first for each symbol libcurl's libraries bind;
# - the unwinder of libgcc linked statically (`-lgcc_eh`, what `-static-libgcc` links): libgcc_s, which the link
#   takes only for what is still undefined, is then one shared library fewer for the dynamic loader to map, and to
#   search before libc for every symbol it binds.
# These are flags of this build only, not of Package.swift, so that the package stays usable as a dependency.
# Builds `sapi-full` beside `sapi`: `sapi` runs it for `--backend urlsession`, `--har` and `--replay`, and looks for
# it in its own folder.
#
#   scripts/build-sapi.sh [--sapi-only]
#
# Then: install -m 755 .build-static/release/sapi .build-static/release/sapi-full ~/.local/bin/
set -euo pipefail
cd "$(dirname "$0")/.."

PRODUCTS=(sapi sapi-full)
case "${1:-}" in
"") ;;
--sapi-only) PRODUCTS=(sapi) ;;
*) echo "usage: scripts/build-sapi.sh [--sapi-only]" >&2; exit 1 ;;
esac

# libcurl's and zlib's headers and pkg-config, when missing (apt-get as root), as scripts/demo.sh does.
source scripts/system-packages.sh
ensure_build_packages

SCRATCH=.build-static
mkdir -p "$SCRATCH"
echo '{ local: *; };' >"$SCRATCH/local-symbols.map"
FLAGS=(-c release --static-swift-stdlib --scratch-path "$SCRATCH"
    -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
    -Xlinker "--version-script=$PWD/$SCRATCH/local-symbols.map" -Xlinker -lgcc_eh)
# A C compiler knows where the system's GCC keeps libstdc++.a (it answers the bare name when there is none): the
# toolchain's clang, else the first in PATH.
archive=""
for compiler in "$(dirname "$(readlink -f "$(command -v swift)")")/clang" clang gcc cc; do
    if command -v "$compiler" >/dev/null; then
        archive=$("$compiler" -print-file-name=libstdc++.a 2>/dev/null || true)
        [[ $archive == /* ]] && break
    fi
done
if [[ $archive == /* && -f $archive ]]; then
    mkdir -p "$SCRATCH/libstdc++"
    ln -sf "$archive" "$SCRATCH/libstdc++/libstdc++.a"
    FLAGS+=(-Xlinker "-L$PWD/$SCRATCH/libstdc++")
else
    echo "build-sapi: no libstdc++.a found; libstdc++ stays a shared library" >&2
fi
for product in "${PRODUCTS[@]}"; do
    swift build "${FLAGS[@]}" --product "$product" >&2
done
echo "$SCRATCH/release"
