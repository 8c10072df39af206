#!/usr/bin/env bash
# The README's first command: shows the library at work through `sapi`, its command-line client, against a
# local httpbin, on a machine that has only the Swift toolchain, python3 and apt. It installs what is missing
# (scripts/system-packages.sh), builds `sapi`, starts the local test servers when they are not running
# (scripts/test-server.sh), makes a few calls — a key path, a business envelope, a download resumed from a
# partial file, a cache hit — says what each shows, and stops what it started.
#
#   scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/system-packages.sh
ensure_build_packages
ensure_test_server_packages

if [ -t 1 ]; then BOLD=$'\033[1m' DIM=$'\033[2m' OFF=$'\033[0m'; else BOLD="" DIM="" OFF=""; fi
say() { printf '\n%s== %s%s\n' "$BOLD" "$1" "$OFF"; }
note() { printf '%s%s%s\n' "$DIM" "$1" "$OFF"; }

echo "demo: building sapi in release (the first build takes a few minutes)"
# The release build scripts/test.sh makes (scripts/build-flags.sh), so that the two share one build.
source scripts/build-flags.sh
swift build "${RELEASE_BUILD[@]}" --product sapi
SAPI="$(swift build "${RELEASE_BUILD[@]}" --show-bin-path)/sapi"

WORK=$(mktemp -d)
STARTED=""
cleanup() {
    rm -rf "$WORK"
    if [ -n "$STARTED" ]; then scripts/test-server.sh stop; fi
}
trap cleanup EXIT
if ! scripts/test-server.sh status >/dev/null 2>&1; then
    STARTED=1
    scripts/test-server.sh start
fi
eval "$(scripts/test-server.sh env)"
URL=$SAPI_HTTPBIN_URL

# Prints the command on standard error (with the server's URL shortened to :PORT, as sapi accepts it), runs it,
# and returns its exit code without ending the script.
sapi() {
    local shown=("$@")
    shown=("${shown[@]//$URL/:${URL##*:}}")
    shown=("${shown[@]//$WORK\//}")
    printf '%s$ sapi %s%s\n' "$BOLD" "${shown[*]}" "$OFF" >&2
    local status=0
    "$SAPI" "$@" || status=$?
    return $status
}
# httpbin's /base64/VALUE answers with VALUE decoded: a server that speaks in envelopes, for the demo.
envelope_url() {
    printf '%s/base64/%s' "$URL" "$(printf '%s' "$1" | python3 -c 'import base64, sys; print(base64.urlsafe_b64encode(sys.stdin.buffer.read()).decode())')"
}

say "A key path: one value out of a JSON document"
sapi -b "$URL/json" --key-path 'slideshow.slides[1].title'
note "The formatter scans the body once and decodes only the value at the key path."

say "A business envelope: the code is checked, then the key path is read inside \"data\""
sapi -b --envelope "$(envelope_url '{"code":0,"msg":"ok","data":{"user":{"name":"Ada","languages":["swift","c"]}}}')" \
    --key-path 'user.languages[0]'
status=0
sapi --envelope "$(envelope_url '{"code":1001,"msg":"your session has ended","data":null}')" || status=$?
note "A code that is not a success code is a typed business error: exit code $status (8 means business)."
[ "$status" = 8 ] || { echo "demo: expected exit code 8, got $status" >&2; exit 1; }

say "A download resumed from a partial file"
sapi -d -o "$WORK/whole.bin" "$URL/range/102400"
head -c 40000 "$WORK/whole.bin" >"$WORK/resumed.bin.part"
note "resumed.bin.part holds the first 40000 bytes, as an interrupted download (Ctrl-C, a dropped connection) leaves it."
sapi -d -c -o "$WORK/resumed.bin" -p h "$URL/range/102400" | tee "$WORK/resume.txt"
# sapi prints the status line as the transport reports it: `HTTP/1.1 206 Partial Content` (curl), `HTTP 206 …` when
# the transport names no version.
grep -qE '^HTTP(/[0-9.]+)? 206( |$)' "$WORK/resume.txt" || { echo "demo: the download was not resumed (no 206)" >&2; exit 1; }
cmp -s "$WORK/whole.bin" "$WORK/resumed.bin" || { echo "demo: the resumed file differs from the whole one" >&2; exit 1; }
[ ! -e "$WORK/resumed.bin.part" ] || { echo "demo: the partial file is still there" >&2; exit 1; }
note "-c resumed the partial file: the server sent only the rest (206, Content-Range: bytes 40000-102399), the
.part file became resumed.bin, and it is identical to the whole download."

say "A cache hit: the second call is answered from the file cache"
first=$(sapi --cache file --cache-dir "$WORK/cache" "$URL/uuid" --key-path uuid)
echo "$first"
second=$(sapi --cache file --cache-dir "$WORK/cache" "$URL/uuid" --key-path uuid -p bm)
echo "$second"
[ "$(echo "$second" | head -n 1)" = "$first" ] \
    || { echo "demo: the second call was not answered from the cache" >&2; exit 1; }
note "/uuid answers a new UUID every time: the same one twice means the file cache answered, without a request."

say "Done"
echo "Next: scripts/test.sh runs the whole test suite; README.md and Sources/ServerAPIKit/ServerAPIKit.docc/ say more."
