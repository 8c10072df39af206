#!/usr/bin/env bash
# Runs the core benchmarks in release mode; results go to Benchmarks/results/bench-core.json.
# Extra arguments go to the benchmark: --requests N, --bytes N, --repetitions N, --output PATH,
# --only overhead|decoding.
#
#   scripts/bench.sh --instructions   # the manager's overhead in instructions per call (valgrind's callgrind)
#
# --instructions builds serverapi-bench statically into Benchmarks/.build-static (valgrind 3.19 cannot run the
# dynamically linked Swift binaries) and counts `MockTransport.perform` called directly and `ServerAPIManager.send`
# over it, each at two call counts: the difference, divided by the calls between them, is what one call costs,
# start-up and shut-down cancelled out. A figure a busy machine does not move, where the timed rows vary by tens
# of percent.
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM keeps the source list of a path dependency from its last plan; touching the benchmark
# manifest makes it notice files added to the library since then.
touch Package.swift Benchmarks/Package.swift
if [ "${1:-}" != "--instructions" ]; then
    exec swift run -c release --package-path Benchmarks serverapi-bench "$@"
fi
command -v valgrind >/dev/null || { echo "bench.sh: --instructions needs valgrind (apt-get install valgrind)" >&2; exit 1; }
swift build -c release --static-swift-stdlib --package-path Benchmarks --scratch-path Benchmarks/.build-static \
    --product serverapi-bench >/dev/null
BIN=Benchmarks/.build-static/release/serverapi-bench
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
count() { # row calls -> instructions of the whole run
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$1.$2" "$BIN" --profile "$1" "$2" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
declare -A PER
for row in direct manager; do
    low=$(count "$row" 2000)
    high=$(count "$row" 12000)
    PER[$row]=$(((high - low) / 10000))
done
echo "instructions per call (callgrind, 10,000 calls):"
printf '  %-40s %8d\n' "MockTransport.perform, direct" "${PER[direct]}" "ServerAPIManager.send, .data" "${PER[manager]}" \
    "overhead of the manager" "$((PER[manager] - PER[direct]))"
