#!/usr/bin/env bash
# Measures cancellation latency: the time from a cancel to the caller's `cancelled` error, per transport
# (curl, URLSession) and per cancellation point (before start, connecting, mid-body, between retries,
# during backpressure of a streamed body), as p50 / p99 / max over N samples. DESIGN.md promises 100 ms;
# the tests keep a generous 1 s bound and never time anything.
# Usage: scripts/bench-cancel.sh [--samples N] [--backend curl|urlsession] [--point NAME]
#   (default: 100 samples per row, both backends, every point; the arguments go to serverapi-cancel-bench)
# Uses the fault fixture of scripts/test-server.sh (started, and stopped on exit, when it is not running). Builds only
# serverapi-cancel-bench (no async-http-client). Prints a table; writes Benchmarks/results/bench-cancel.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

source scripts/system-packages.sh
ensure_build_packages

echo "Building serverapi-cancel-bench (release)…" >&2
# A path dependency's new files are only noticed when a manifest changes.
touch Package.swift Benchmarks/Package.swift
swift build -c release --package-path Benchmarks --product serverapi-cancel-bench >&2
BENCH="$(swift build -c release --package-path Benchmarks --show-bin-path)/serverapi-cancel-bench"

# The fault fixture of scripts/test-server.sh: used when it runs, else started here and stopped on exit.
if ! scripts/test-server.sh status >/dev/null 2>&1; then
    trap 'scripts/test-server.sh stop' EXIT
    scripts/test-server.sh start >&2
fi
eval "$(scripts/test-server.sh env)"

mkdir -p Benchmarks/results
"$BENCH" --output "$ROOT/Benchmarks/results/bench-cancel.json" "$@"
