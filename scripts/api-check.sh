#!/usr/bin/env bash
# Checks that the public API of the library products is the one recorded in api/<module>.txt, so that every change
# to it is deliberate: a removed or changed declaration breaks the code of users, an added one is API kept from then
# on. scripts/test.sh runs it right after the first build; it reads that build's modules (.build/debug/Modules, or
# those of another debug build folder) with the toolchain's swift-api-digester (-dump-sdk) and compiles nothing: a
# few seconds.
#
#   scripts/api-check.sh                          # compare; on a difference, print it and fail
#   scripts/api-check.sh --update                 # rewrite api/*.txt from the current build (after `swift build`)
#   scripts/api-check.sh --scratch-path .build-tsan  # read the modules of that build folder (scripts/test.sh's first)
#   scripts/api-check.sh --count                  # count what api/*.txt records: declarations, types, SPI; no build
#
# api/<module>.txt has one line per public declaration (scripts/api-list.py): the signature, demangled from its
# mangled name (generic requirements, async, throws, @Sendable), then in brackets the kind and what the mangled name
# leaves out (default arguments, setters, attributes, conformances). `package` declarations are not listed.
set -euo pipefail
cd "$(dirname "$0")/.."

UPDATE=""
SCRATCH=()
while [ $# -gt 0 ]; do
    case "$1" in
        --count)
            # Public declarations leave out the SPIs' and the compiler's own (`__derived_…` equality); types are
            # classes, structures, enumerations, protocols and actors, nested ones included.
            python3 - api/*.txt <<'PY'
import re, sys
for path in sys.argv[1:]:
    lines = [l for l in open(path) if l.strip() and not l.startswith("#")]
    spi = [l for l in lines if "@SPIAccessControl" in l]
    public = [l for l in lines if "@SPIAccessControl" not in l and "__derived_" not in l]
    types = [l for l in public if re.search(r"\[(class|struct|enum|protocol|actor)\b", l)]
    top = [l for l in types if "." not in l.split()[0]]
    name = path.rsplit("/", 1)[-1][:-4]
    print(f"{name}: {len(public)} public declarations, {len(types)} types ({len(top)} top-level), {len(spi)} in SPIs")
PY
            exit 0 ;;
        --update) UPDATE=1 ;;
        --scratch-path) [ $# -ge 2 ] || { echo "api-check.sh: --scratch-path needs a folder" >&2; exit 1; }
            SCRATCH=(--scratch-path "$2"); shift ;;
        *) echo "api-check.sh: unknown option $1 (try --update, --scratch-path DIR, --count)" >&2; exit 1 ;;
    esac
    shift
done

# The library products of Package.swift (scripts/docs.sh documents the same six).
MODULES=(ServerAPIKit ServerAPICurl ServerAPIURLSession ServerAPIMemoryCache ServerAPIFileCache ServerAPITesting)

TOOLS="$(dirname "$(readlink -f "$(command -v swift)")")"
DIGESTER="$TOOLS/swift-api-digester"
DEMANGLE="$TOOLS/swift-demangle"
for tool in "$DIGESTER" "$DEMANGLE"; do
    [ -x "$tool" ] || { echo "api-check.sh: no $(basename "$tool") next to swift ($tool)" >&2; exit 1; }
done
BIN=$(swift build "${SCRATCH[@]}" --show-bin-path)
TRIPLE=$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
for module in "${MODULES[@]}"; do
    [ -f "$BIN/Modules/$module.swiftmodule" ] || {
        echo "api-check.sh: no $BIN/Modules/$module.swiftmodule: run swift build --build-tests first" >&2
        exit 1
    }
done

OUT=.build/api-check
rm -rf "$OUT"
mkdir -p "$OUT" api
changed=()
for module in "${MODULES[@]}"; do
    "$DIGESTER" -dump-sdk -module "$module" -target "$TRIPLE" -I "$BIN/Modules" -I Backends/CCurl -I Sources/CZlib \
        -avoid-location -avoid-tool-args -abort-on-module-fail -o "$OUT/$module.json"
    python3 scripts/api-list.py "$OUT/$module.json" "$DEMANGLE" >"$OUT/$module.txt"
    if [ -n "$UPDATE" ]; then
        if ! cmp -s "$OUT/$module.txt" "api/$module.txt"; then
            cp "$OUT/$module.txt" "api/$module.txt"
            echo "api-check.sh: wrote api/$module.txt ($(($(wc -l <"api/$module.txt") - 1)) declarations)"
        fi
    elif [ ! -f "api/$module.txt" ]; then
        echo "api-check.sh: no baseline api/$module.txt for $module" >&2
        changed+=("$module")
    elif ! diff -u --label "api/$module.txt (recorded)" --label "$module (this build)" \
        "api/$module.txt" "$OUT/$module.txt" >"$OUT/$module.diff"; then
        {
            echo "api-check.sh: the public API of $module is not the one recorded in api/$module.txt:"
            grep -E '^[-+][^-+]' "$OUT/$module.diff" | sed -e 's/^-/  removed: /' -e 's/^+/  added:   /'
        } >&2
        changed+=("$module")
    fi
done

if [ ${#changed[@]} -gt 0 ]; then
    cat >&2 <<EOF
api-check.sh: the public API changed (${changed[*]}). A "removed" line that comes back as an "added" one is a changed
declaration. If the change is meant:
  1. run scripts/api-check.sh --update and commit the api/*.txt it rewrites with the change;
  2. add a line to CHANGELOG.md under ## [Unreleased]: ### Added for a new declaration, ### Changed for a removed
     or changed one, saying what to write instead.
If it is not meant (a helper made public by mistake), make it \`package\` or internal instead.
EOF
    exit 1
fi
if [ -z "$UPDATE" ]; then echo "api-check.sh: the public API of ${MODULES[*]} is the one recorded in api/"; fi
