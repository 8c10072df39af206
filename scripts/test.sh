#!/usr/bin/env bash
# Runs the whole test suite, the way CI does: builds with warnings as errors, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build "$@"
