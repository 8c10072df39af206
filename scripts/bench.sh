#!/usr/bin/env bash
# Runs the core benchmarks in release mode; results go to Benchmarks/results/bench-core.json.
# Extra arguments go to the benchmark: --requests N, --bytes N, --repetitions N, --output PATH,
# --only overhead|decoding.
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM keeps the source list of a path dependency from its last plan; touching the benchmark
# manifest makes it notice files added to the library since then.
touch Package.swift Benchmarks/Package.swift
swift run -c release --package-path Benchmarks serverapi-bench "$@"
