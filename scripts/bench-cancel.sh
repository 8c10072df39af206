#!/usr/bin/env bash
# Measures cancellation latency: the time from a cancel to the caller's `cancelled` error, per transport
# (curl, URLSession) and per cancellation point (before start, connecting, mid-body, between retries,
# during backpressure of a streamed body), as p50 / p99 / max over N samples. DESIGN.md promises 100 ms;
# the tests keep a generous 1 s bound and never time anything.
# Usage: scripts/bench-cancel.sh [--samples N] [--backend curl|urlsession] [--point NAME]
#   (default: 100 samples per row, both backends, every point; the arguments go to serverapi-cancel-bench)
# Starts the fault fixture on a port the kernel picks and stops it on exit. Builds only
# serverapi-cancel-bench (no async-http-client). Prints a table; writes Benchmarks/results/bench-cancel.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

if ! command -v pkg-config >/dev/null || ! pkg-config --exists libcurl 2>/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config libcurl4-openssl-dev >/dev/null
fi

echo "Building serverapi-cancel-bench (release)…" >&2
# A path dependency's new files are only noticed when a manifest changes.
touch Package.swift Benchmarks/Package.swift
swift build -c release --package-path Benchmarks --product serverapi-cancel-bench >&2
BENCH="$(swift build -c release --package-path Benchmarks --show-bin-path)/serverapi-cancel-bench"

WORK=$(mktemp -d /tmp/bench-cancel.XXXXXX)
FIXTURE_PID=""
cleanup() {
    if [[ -n "$FIXTURE_PID" ]]; then kill "$FIXTURE_PID" 2>/dev/null || true; wait "$FIXTURE_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 "$ROOT/Tests/Fixtures/fault_server.py" --host 127.0.0.1 --port 0 --port-file "$WORK/port" \
    >"$WORK/fixture.log" 2>&1 </dev/null &
FIXTURE_PID=$!
for _ in $(seq 300); do
    [[ -s "$WORK/port" ]] && break
    sleep 0.1
done
[[ -s "$WORK/port" ]] || { echo "the fixture server did not start:" >&2; cat "$WORK/fixture.log" >&2; exit 1; }

mkdir -p Benchmarks/results
SAPI_FIXTURE_URL="http://127.0.0.1:$(tr -d '[:space:]' <"$WORK/port")" \
    "$BENCH" --output "$ROOT/Benchmarks/results/bench-cancel.json" "$@"
