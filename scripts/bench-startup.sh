#!/usr/bin/env bash
# Measures sapi's start-up: the wall time of one small GET (httpbin's /get on loopback) by `sapi`, against
# `curl -s` doing the same, in the same run, interleaved (sapi, curl, sapi, curl, ...) so that both see the
# same machine. Also `sapi --version` (start-up alone, no call).
#
#   scripts/bench-startup.sh [--runs N] [--dynamic] [--instructions]
#
# By default sapi is the build the README installs (scripts/build-sapi.sh, in .build-static/): release, with the
# Swift runtime, Foundation and libstdc++ linked statically; as shared libraries they cost more at start-up (the
# dynamic loader's relocations and symbol look-ups) than the call itself. --dynamic adds a row for the default
# dynamically linked release build.
# Starts the local httpbin (scripts/test-server.sh) when it is not running, and stops it again.
# Prints medians and 90th percentiles; writes Benchmarks/results/bench-startup.json.
# --instructions adds the instructions each row executes (valgrind's callgrind, one run each): a figure a busy
# machine does not disturb, where wall times on shared cores vary by tens of percent.
# Goal: sapi GET ÷ curl GET ≤ 1.3 (medians).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=60
DYNAMIC=0
INSTRUCTIONS=0
while [[ $# -gt 0 ]]; do
    case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --dynamic) DYNAMIC=1; shift ;;
    --instructions) INSTRUCTIONS=1; shift ;;
    *) echo "usage: scripts/bench-startup.sh [--runs N] [--dynamic] [--instructions]" >&2; exit 1 ;;
    esac
done
command -v curl >/dev/null || { echo "bench-startup: curl is needed as the reference" >&2; exit 1; }
if [[ $INSTRUCTIONS == 1 ]] && ! command -v valgrind >/dev/null; then
    echo "bench-startup: --instructions needs valgrind (apt-get install valgrind)" >&2
    exit 1
fi

STATIC_SAPI="$(scripts/build-sapi.sh --sapi-only)/sapi"
DYNAMIC_SAPI=""
if [[ $DYNAMIC == 1 ]]; then
    source scripts/build-flags.sh
    swift build "${RELEASE_BUILD[@]}" --product sapi >&2
    DYNAMIC_SAPI=.build/release/sapi
fi

if ! scripts/test-server.sh status >/dev/null 2>&1; then
    trap 'scripts/test-server.sh stop' EXIT
fi
scripts/test-server.sh start >&2
eval "$(scripts/test-server.sh env)"

mkdir -p Benchmarks/results
python3 - "$RUNS" "$SAPI_HTTPBIN_URL/get" "$STATIC_SAPI" "$DYNAMIC_SAPI" "$INSTRUCTIONS" <<'EOF'
import json, re, statistics, subprocess, sys, time

runs, url, static_sapi, dynamic_sapi = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
count_instructions = sys.argv[5] == "1"
rows = {
    "sapi GET": [static_sapi, url],
    "curl -s GET": ["curl", "-s", url],
    "sapi --version": [static_sapi, "--version"],
}
if dynamic_sapi:
    rows["sapi GET (dynamic)"] = [dynamic_sapi, url]
times = {name: [] for name in rows}

def run(command):
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"bench-startup: {' '.join(command)} exited {done.returncode}: {done.stderr.decode()}")
    return elapsed * 1000

for command in rows.values():  # warm the page cache and the server's connection pool
    for _ in range(3):
        run(command)
for _ in range(runs):
    for name, command in rows.items():
        times[name].append(run(command))

def p90(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]

print(f"{'row':<22}{'median ms':>11}{'p90 ms':>9}")
for name, values in times.items():
    print(f"{name:<22}{statistics.median(values):>11.2f}{p90(values):>9.2f}")
ratio = statistics.median(times["sapi GET"]) / statistics.median(times["curl -s GET"])
print(f"\nsapi GET ÷ curl GET (medians): {ratio:.2f}×  (goal ≤ 1.3×: {'met' if ratio <= 1.3 else 'missed'})")
result = {name: {"median_ms": statistics.median(v), "p90_ms": p90(v), "runs": len(v)} for name, v in times.items()}
result["ratio_sapi_over_curl"] = ratio

def instructions(command):
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + command,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    found = re.search(rb"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not found:
        sys.exit(f"bench-startup: callgrind of {' '.join(command)} failed: {done.stderr.decode()[-400:]}")
    return int(found.group(1))

if count_instructions:
    print(f"\n{'row':<22}{'instructions':>14}")
    counts = {name: instructions(command) for name, command in rows.items()}
    for name, count in counts.items():
        print(f"{name:<22}{count:>14,}")
        result[name]["instructions"] = count
    ratio = counts["sapi GET"] / counts["curl -s GET"]
    print(f"\nsapi GET ÷ curl GET (instructions): {ratio:.2f}×")
    result["instruction_ratio_sapi_over_curl"] = ratio
with open("Benchmarks/results/bench-startup.json", "w") as out:
    json.dump(result, out, indent=2)
EOF
