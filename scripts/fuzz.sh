#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, with AddressSanitizer) of every parser of untrusted bytes: the
# harnesses are in Fuzz/ (a package of its own), their seed corpora in Tests/Fuzz/corpus/NAME/.
#
#   scripts/fuzz.sh                  # build, then run every harness for FUZZ_SECONDS (default 600) each
#   scripts/fuzz.sh NAME [SECONDS]   # build, then run one harness (default 600 s)
#   scripts/fuzz.sh --smoke [SECONDS]  # build, then every harness for SECONDS (default 5) each: CI's run
#   scripts/fuzz.sh --list           # the harnesses
#   scripts/fuzz.sh --build          # only build
#   scripts/fuzz.sh --no-build ...   # any of the above without building first (after --build)
#
# Any crash, sanitizer report or violated property fails the run; the input that caused it is saved in
# Fuzz/artifacts/ (ignored by git): replay it with `FUZZ_HARNESS=NAME Fuzz/.build/debug/ParserFuzzer FILE`,
# then turn it into a regression test in the normal test targets. Inputs the fuzzer finds on the way go to
# Fuzz/.build/corpus/NAME/ (kept between runs, never committed); the seeds are never rewritten.
set -euo pipefail
cd "$(dirname "$0")/.."

corpus_root=Tests/Fuzz/corpus
harnesses=$(ls "$corpus_root")
binary=Fuzz/.build/debug/ParserFuzzer

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 1; }

skip_build=""
if [ "${1:-}" = --no-build ]; then
    skip_build=1
    shift
fi
build() {
    [ -z "$skip_build" ] || return 0
    echo "fuzz.sh: building the fuzzers (-sanitize=fuzzer,address)" >&2
    # Debug: testability lets the harnesses reach internal parsers with @testable import. lld, because
    # SwiftPM gives the executable a `main` besides libFuzzer's, which gold cannot report and lld resolves.
    swift build --package-path Fuzz --scratch-path Fuzz/.build -c debug \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xswiftc -warnings-as-errors 2>&1 \
        | grep -v "Cannot export local symbol '__asan" >&2
}

# run NAME SECONDS: fuzzes one harness; prints one summary line; fails on a crash.
run() {
    local name=$1 seconds=$2
    if ! grep -qx "$name" <<<"$harnesses"; then
        echo "fuzz.sh: no harness \"$name\" (one of: $(echo $harnesses))" >&2
        exit 1
    fi
    local work=Fuzz/.build/corpus/$name log=Fuzz/.build/logs/$name.log
    mkdir -p "$work" Fuzz/.build/logs Fuzz/artifacts
    local status=0
    # No Swift backtracer: libFuzzer reports the crash itself, and the backtracer would slow it down.
    FUZZ_HARNESS=$name SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
        "$binary" "$work" "$corpus_root/$name" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -artifact_prefix="Fuzz/artifacts/$name-" -print_final_stats=1 >"$log" 2>&1 || status=$?
    local execs cov ft
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    printf '%-20s %6ss  execs %-10s cov %-6s ft %-6s corpus %s\n' "$name" "$seconds" "${execs:-?}" "${cov:-?}" \
        "${ft:-?}" "$(ls "$work" | wc -l)"
    if [ "$status" != 0 ]; then
        echo "fuzz.sh: $name FAILED (exit $status); log: $log" >&2
        grep -E 'property violated|Fatal error|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY|Test unit written' "$log" \
            | head -20 >&2 || true
        return 1
    fi
}

case "${1:-}" in
    --list)
        echo "$harnesses"
        ;;
    --build)
        build
        ;;
    --smoke | "")
        if [ "${1:-}" = --smoke ]; then seconds=${2:-5}; else seconds=${FUZZ_SECONDS:-600}; fi
        build
        # One harness per core at a time; each writes its status to a file of its own.
        jobs=$(nproc 2>/dev/null || echo 1)
        statuses=$(mktemp -d)
        for name in $harnesses; do
            while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
            (run "$name" "$seconds" && echo 0 >"$statuses/$name" || echo 1 >"$statuses/$name") &
        done
        wait
        failed=()
        for name in $harnesses; do [ "$(cat "$statuses/$name" 2>/dev/null)" = 0 ] || failed+=("$name"); done
        rm -rf "$statuses"
        if [ ${#failed[@]} -gt 0 ]; then
            echo "fuzz.sh: crashes in: ${failed[*]} (inputs in Fuzz/artifacts/)" >&2
            exit 1
        fi
        ;;
    -*)
        usage
        ;;
    *)
        build
        run "$1" "${2:-600}"
        ;;
esac
