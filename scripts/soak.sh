#!/usr/bin/env bash
# A soak and chaos run of the manager over each real transport (Sources/serverapi-soak): rounds of
# calls side by side against the local fault fixture (fast, slow, failing statuses with retries, refused
# connections, dropped bodies, wrong lengths, stalls, hangs, downloads, uploads, streamed bodies,
# completion handlers), cancelled at random by id, tag, first, last, all, the caller's task and the
# handle. Fails (exit 1, with the reasons) when a call does not end exactly once with a result or a
# ServerAPIError, when the transport reports active transfers after a round, when open descriptors do
# not return to their baseline, or when resident memory keeps growing after the first round.
#
#   scripts/soak.sh                          # both backends, 6 rounds of 10,000 calls, release build
#   scripts/soak.sh --short                  # both backends, 3 rounds of 400 calls (CI)
#   scripts/soak.sh --backend curl --calls 20000 --rounds 8
#   scripts/soak.sh --backend urlsession --emulate-url-fix   # an experiment: see below
#
# --emulate-url-fix preloads Benchmarks/reference/curlu_cleanup_preload.c into the URLSession run: it
# frees the URL that FoundationNetworking (Swift 5.10 to 6.3.1) parses for every task and leaks,
# as swift-corelibs-foundation's fix (#5498) does, to show the transport's memory without that leak.
#
# Uses the servers of scripts/test-server.sh when they run; otherwise starts them and stops them on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

BACKENDS=(curl urlsession)
CALLS=10000
ROUNDS=6
CONCURRENCY=48
EMULATE_URL_FIX=0
usage() {
    echo "usage: scripts/soak.sh [--short] [--backend curl|urlsession|both] [--calls N] [--rounds R] [--concurrency C] [--emulate-url-fix]" >&2
    exit 1
}
while [ $# -gt 0 ]; do
    case "$1" in
        --short) CALLS=400; ROUNDS=3 ;;
        --backend)
            [ $# -ge 2 ] || usage
            case "$2" in
                both) BACKENDS=(curl urlsession) ;;
                curl | urlsession) BACKENDS=("$2") ;;
                *) usage ;;
            esac
            shift ;;
        --calls) [ $# -ge 2 ] || usage; CALLS=$2; shift ;;
        --rounds) [ $# -ge 2 ] || usage; ROUNDS=$2; shift ;;
        --concurrency) [ $# -ge 2 ] || usage; CONCURRENCY=$2; shift ;;
        --emulate-url-fix) EMULATE_URL_FIX=1 ;;
        *) usage ;;
    esac
    shift
done

echo "soak: building serverapi-soak (release)…" >&2
# The release build that scripts/test.sh makes (scripts/build-flags.sh): after CI's, nothing is left to build.
source scripts/build-flags.sh
swift build "${RELEASE_BUILD[@]}" --product serverapi-soak >&2
BIN="$(swift build "${RELEASE_BUILD[@]}" --show-bin-path)/serverapi-soak"

if ! scripts/test-server.sh status >/dev/null 2>&1; then
    trap 'scripts/test-server.sh stop' EXIT
    scripts/test-server.sh start
fi
eval "$(scripts/test-server.sh env)"

PRELOAD=""
if [ "$EMULATE_URL_FIX" = 1 ]; then
    PRELOAD="$(swift build "${RELEASE_BUILD[@]}" --show-bin-path)/curlu_cleanup_preload.so"
    cc -shared -fPIC -O2 -o "$PRELOAD" Benchmarks/reference/curlu_cleanup_preload.c -ldl -lcurl
fi

status=0
for backend in "${BACKENDS[@]}"; do
    preload=""
    if [ "$backend" = urlsession ]; then preload="$PRELOAD"; fi
    if ! LD_PRELOAD="$preload" "$BIN" --backend "$backend" --calls "$CALLS" --rounds "$ROUNDS" --concurrency "$CONCURRENCY"; then
        echo "soak: $backend FAILED" >&2
        status=1
    fi
done
exit $status
