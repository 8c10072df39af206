#!/usr/bin/env bash
# The resilience policies against the fault fixture (issue 29): p99 with and without hedging for one slow
# replica, a call's time once the circuit breaker is open and how soon traffic resumes, the extra load of a
# retry storm with and without the retry budget, throughput and p99 of an overloaded upstream with no limit,
# fixed limits, AIMD and gradient. Ratios from one run, CurlTransport, release.
# Usage: scripts/bench-resilience.sh [--calls N] [--concurrency C] [--scenario slow-replica|down|retry-storm|overload]
#   (default: 2000 calls, 32 at a time; the arguments go to serverapi-resilience-bench)
# Needs a quiet machine for numbers worth keeping. Uses the fault fixture of scripts/test-server.sh (started,
# and stopped on exit, when it is not running). Builds only serverapi-resilience-bench. Prints Markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/system-packages.sh
ensure_build_packages

CONFIG=${SAPI_BENCH_CONFIG:-release}
echo "Building serverapi-resilience-bench ($CONFIG)…" >&2
# A path dependency's new files are only noticed when a manifest changes.
touch Package.swift Benchmarks/Package.swift
swift build -c "$CONFIG" --package-path Benchmarks --product serverapi-resilience-bench >&2
BENCH="$(swift build -c "$CONFIG" --package-path Benchmarks --show-bin-path)/serverapi-resilience-bench"

if ! scripts/test-server.sh status >/dev/null 2>&1; then
    trap 'scripts/test-server.sh stop' EXIT
    scripts/test-server.sh start >&2
fi
eval "$(scripts/test-server.sh env)"

"$BENCH" "$@"
