#!/usr/bin/env bash
# Runs the curl backend's tests and the conformance suite under AddressSanitizer, whose
# LeakSanitizer reports every allocation still unreachable when a test process exits: easy handles,
# header lists, mime parts, transfers and their buffers. Not part of scripts/test.sh (an
# instrumented build of its own takes a few minutes); run it after touching Backends/ServerAPICurl.
#
#   scripts/leak-check.sh                      # curl tests + conformance suite
#   scripts/leak-check.sh --filter CurlTLS     # arguments go to `swift test`
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=.build-asan

swift build --build-tests --sanitize=address --scratch-path "$SCRATCH"

if ! scripts/test-server.sh status >/dev/null 2>&1; then
    trap 'scripts/test-server.sh stop' EXIT
fi
scripts/test-server.sh start
eval "$(scripts/test-server.sh env)"

# Each test process writes its LeakSanitizer report to REPORTS/asan.PID when it exits;
# scripts/leak-report.py then fails on any leak of the library's (see there for what the test
# fixtures' Foundation.Process leaks and why they are listed apart).
REPORTS="$SCRATCH/leak-reports"
rm -rf "$REPORTS"
mkdir -p "$REPORTS"
# The slow unwinder follows stacks through libcurl and Foundation, which have no frame pointers:
# without it a leak inside FoundationNetworking cannot be told from one of ours.
export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:log_path=$PWD/$REPORTS/asan:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="exitcode=0:${LSAN_OPTIONS:-}"
if [ $# -gt 0 ]; then
    swift test --skip-build --sanitize=address --scratch-path "$SCRATCH" "$@"
else
    swift test --skip-build --sanitize=address --scratch-path "$SCRATCH" --filter ServerAPICurlTests
    swift test --skip-build --sanitize=address --scratch-path "$SCRATCH" --filter ConformanceTests \
        --skip LargeTransferTests --no-parallel
fi
python3 scripts/leak-report.py "$REPORTS"
