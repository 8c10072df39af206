#!/usr/bin/env bash
# Builds the documentation site with the docc that ships in the toolchain (no plugin, no package dependency):
# one catalog per library product (Sources/ServerAPIKit/ServerAPIKit.docc with the articles, and a small landing
# page in Backends/<product>/<product>.docc for each backend), merged into one static site in .build-docs/site
# (ignored by git). Warnings are errors: a broken symbol or article link fails the build.
#
# The symbol graphs come from the module files of the main debug build (.build/debug/Modules) through
# `swift symbolgraph-extract`, so nothing is compiled twice: the script first runs the same build command as
# scripts/test.sh, which does nothing when that build is up to date.
#
#   scripts/docs.sh               # build the site
#   scripts/docs.sh --coverage    # also print which public symbols have no summary (docc's experimental coverage)
#   scripts/docs.sh --skip-build  # use the existing debug build as it is
#   scripts/docs.sh --skip-build --scratch-path .build-tsan  # or that of another build folder (scripts/test.sh's)
#
# To look at the site: python3 -m http.server -d .build-docs/site 8000, then open
# http://127.0.0.1:8000/documentation/serverapikit/
set -euo pipefail
cd "$(dirname "$0")/.."

COVERAGE=""
BUILD=1
SCRATCH=()
while [ $# -gt 0 ]; do
    case "$1" in
        --coverage) COVERAGE=1 ;;
        --skip-build) BUILD="" ;;
        --scratch-path) [ $# -ge 2 ] || { echo "docs.sh: --scratch-path needs a folder" >&2; exit 1; }
            SCRATCH=(--scratch-path "$2"); shift ;;
        *) echo "docs.sh: unknown option $1 (try --coverage, --skip-build, --scratch-path DIR)" >&2; exit 1 ;;
    esac
    shift
done

# The library products, each with its catalog.
MODULES=(ServerAPIKit ServerAPICurl ServerAPIURLSession ServerAPIMemoryCache ServerAPIFileCache ServerAPITesting)
catalog() {
    if [ "$1" = ServerAPIKit ]; then echo "Sources/ServerAPIKit/ServerAPIKit.docc"; else echo "Backends/$1/$1.docc"; fi
}

OUT=.build-docs
DOCC=$(command -v docc || true)
if [ -z "$DOCC" ]; then
    DOCC="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
fi
[ -x "$DOCC" ] || { echo "docs.sh: no docc next to swift ($DOCC)" >&2; exit 1; }

if [ -n "$BUILD" ]; then swift build --build-tests -Xswiftc -warnings-as-errors; fi
BIN=$(swift build "${SCRATCH[@]}" --show-bin-path)
TRIPLE=$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')

rm -rf "$OUT/symbol-graphs" "$OUT/archives" "$OUT/site"
mkdir -p "$OUT/symbol-graphs" "$OUT/archives"
for module in "${MODULES[@]}"; do
    # Public API only; members synthesized by the compiler (Equatable's !=, default implementations
    # re-listed on conforming types) are left out on purpose: they carry no documentation of ours.
    mkdir -p "$OUT/symbol-graphs/$module"
    swift symbolgraph-extract -module-name "$module" -target "$TRIPLE" -I "$BIN/Modules" -I Backends/CCurl -I Sources/CZlib \
        -minimum-access-level public -skip-synthesized-members -output-dir "$OUT/symbol-graphs/$module"
done

for module in "${MODULES[@]}"; do
    # Protocol witnesses (`description`, `==`, `hash(into:)`, `init(from:)`, `next()`, …) show the summary of the
    # requirement they implement, from the standard library, rather than one written again for each.
    options=(--warnings-as-errors --transform-for-static-hosting --enable-inherited-docs)
    if [ -n "$COVERAGE" ]; then options+=(--experimental-documentation-coverage --coverage-summary-level brief); fi
    "$DOCC" convert "$(catalog "$module")" --additional-symbol-graph-dir "$OUT/symbol-graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.serverapikit.$module" \
        --output-path "$OUT/archives/$module.doccarchive" "${options[@]}"
done

archives=()
for module in "${MODULES[@]}"; do archives+=("$OUT/archives/$module.doccarchive"); done
"$DOCC" merge "${archives[@]}" --synthesized-landing-page-name ServerAPIKit \
    --synthesized-landing-page-kind Package --output-path "$OUT/site"

if [ -n "$COVERAGE" ]; then
    python3 - "$OUT/archives" "${MODULES[@]}" <<'EOF'
import json, sys
# Lists the public symbols docc found without an abstract (a one-line summary).
root, modules = sys.argv[1], sys.argv[2:]
missing = 0
for module in modules:
    with open(f"{root}/{module}.doccarchive/documentation-coverage.json") as file:
        entries = json.load(file)
    for entry in entries:
        # Symbols only: articles and docc's own "… Implementations" groups are pages, not API.
        if entry.get("kind", {}).get("isSymbol") and not entry.get("hasAbstract", True):
            missing += 1
            print(f"no summary: {module}: {entry.get('title') or entry.get('referencePath')}")
print(f"{missing} public symbols without a summary")
EOF
fi
echo "docs.sh: the site is in $OUT/site (documentation/serverapikit/)"
