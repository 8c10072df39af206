#!/usr/bin/env bash
# Runs the whole test suite, the way CI does, on a machine that has only the Swift toolchain,
# python3 and apt: installs what is missing, builds with warnings as errors, starts the local
# test servers (httpbin, the fault fixture and their HTTP/2 front, see scripts/test-server.sh), runs every test with
# their URLs in the environment, and always stops the servers again.
#
#   scripts/test.sh                       # everything, then a short run of every fuzzer (scripts/fuzz.sh --smoke)
#   scripts/test.sh --filter Conformance  # arguments go to `swift test`
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
    if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
        echo "test.sh: missing system packages ($*) and no apt-get as root to install them" >&2
        exit 1
    fi
    if [ -z "${APT_UPDATED:-}" ]; then
        apt-get update -qq
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# --- System packages ---------------------------------------------------------------------------
# The test servers need a working `python3 -m venv` (Debian splits it into python3-venv);
# scripts/test-server.sh installs it when creating the venv fails.
# The curl backend (Backends/CCurl) builds against libcurl found through pkg-config.
if ! command -v pkg-config >/dev/null 2>&1; then apt_install pkg-config; fi
if ! pkg-config --exists libcurl; then apt_install libcurl4-openssl-dev; fi
# The curl backend's TLS tests make their certificates with openssl.
if ! command -v openssl >/dev/null 2>&1; then apt_install openssl; fi
# The HTTP/2 front of the test servers is Debian's nginx (scripts/test-server.sh).
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then apt_install nginx-light; fi
# sapi's terminal features (colours, progress bar, password prompt, Ctrl-C) are tested in a real terminal.
if ! command -v tmux >/dev/null 2>&1; then apt_install tmux; fi
# -----------------------------------------------------------------------------------------------

swift build --build-tests -Xswiftc -warnings-as-errors

# Integration and conformance tests fail (never skip) without these servers. Servers that
# were already running (started by hand) are used and left running.
if ! scripts/test-server.sh status >/dev/null 2>&1; then
    trap 'scripts/test-server.sh stop' EXIT
fi
scripts/test-server.sh start
eval "$(scripts/test-server.sh env)"

if [ $# -gt 0 ]; then
    swift test --skip-build "$@"
else
    # Three processes, one after the other. The conformance suite checks cancellation promptness
    # (DESIGN.md: 100 ms) and timeouts against real servers: it runs one test at a time, so that a
    # latency it measures is the transport's, not two cores shared with 400 other requests.
    # The 200 MB transfers measure this process's memory.
    swift test --skip-build --skip ConformanceTests
    swift test --skip-build --filter ConformanceTests --skip LargeTransferTests --no-parallel
    swift test --skip-build --filter LargeTransferTests
    # Every parser of untrusted bytes under libFuzzer for a few seconds each (a crash fails CI);
    # the long runs are `scripts/fuzz.sh` by hand.
    scripts/fuzz.sh --smoke
fi
