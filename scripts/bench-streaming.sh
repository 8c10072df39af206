#!/usr/bin/env bash
# Measures streamed responses (ServerAPIManager.stream) against references, on a local nginx.
# Usage: scripts/bench-streaming.sh [--quick]
#   full run: 3 runs per row (medians), 10,000,000 server-sent events (about 500 MB), a 1 GiB stream.
#   --quick:  1 run per row, 2,000,000 events, a 256 MiB stream.
#   SAPI_BENCH_SSE_EVENTS=N and SAPI_BENCH_STREAM_BYTES=N override the sizes.
# nginx serves both bodies from files with sendfile, so the server is not the bottleneck: the `curl -N`
# rows (no parsing, output to /dev/null) show the ceiling.
# Rows:
#   server-sent events (a text/event-stream file of N events "id: i" / "data: <32 letters>", as the fault
#     fixture's /sse/count): the manager over CurlTransport reading `response.events`, async-http-client
#     splitting the bytes into events itself, the manager over URLSessionTransport (for information); each
#     run checks that N events arrived and that the last id is N. For information, `curl -N -o /dev/null`.
#   large stream (a file of N bytes): the manager over CurlTransport reading `response.body` as chunks
#     (counted, dropped), `curl -N -o /dev/null`, and for information the manager over URLSessionTransport
#     and async-http-client; with each one's peak memory.
# Each ratio is between rows of the same run. Starts nginx on a port the kernel picks and stops it on exit.
# Installs nginx, `time` and the libcurl headers with apt when missing. Prints a table; writes
# Benchmarks/results/bench-streaming.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

RUNS=3
SSE_EVENTS=10000000
STREAM_BYTES=$((1024 * 1024 * 1024))
if [[ "${1:-}" == "--quick" ]]; then
    RUNS=1
    SSE_EVENTS=2000000
    STREAM_BYTES=$((256 * 1024 * 1024))
elif [[ -n "${1:-}" ]]; then
    echo "usage: scripts/bench-streaming.sh [--quick]" >&2
    exit 1
fi
SSE_EVENTS=${SAPI_BENCH_SSE_EVENTS:-$SSE_EVENTS}
STREAM_BYTES=${SAPI_BENCH_STREAM_BYTES:-$STREAM_BYTES}

missing=()
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx-light)
[[ -x /usr/bin/time ]] || missing+=(time)
command -v curl >/dev/null || missing+=(curl)
command -v pkg-config >/dev/null || missing+=(pkg-config)
pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

NGINX=$(command -v nginx || echo /usr/sbin/nginx)

echo "Building serverapi-stream-bench (release)…" >&2
# A path dependency's new files are only noticed when a manifest changes.
touch Package.swift Benchmarks/Package.swift
swift build -c release --package-path Benchmarks --product serverapi-stream-bench >&2
BIN="$(swift build -c release --package-path Benchmarks --show-bin-path)"
BENCH="$BIN/serverapi-stream-bench"

WORK=$(mktemp -d /tmp/bench-streaming.XXXXXX)
NGINX_PID=""
FIXTURE_PID=""
cleanup() {
    if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    if [[ -n "$FIXTURE_PID" ]]; then kill "$FIXTURE_PID" 2>/dev/null || true; wait "$FIXTURE_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# nginx serves both bodies from files with sendfile, so the server costs little CPU and every client is
# measured against the same fast source (the Python fixture, single-threaded, would be the bottleneck).
mkdir -p "$WORK/www" "$WORK/tmp"
chmod 755 "$WORK" "$WORK/www"
# The event stream: event i is "id: i\ndata: <32 letters a-z repeated>\n\n", as the fixture's /sse/count.
python3 - "$WORK/www/events.sse" "$SSE_EVENTS" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
data = (b"abcdefghijklmnopqrstuvwxyz" * 2)[:32]
with open(path, "wb", buffering=1 << 20) as out:
    batch = []
    for i in range(1, n + 1):
        batch.append(b"id: %d\ndata: %s\n\n" % (i, data))
        if len(batch) == 10000:
            out.write(b"".join(batch))
            batch = []
    out.write(b"".join(batch))
PY
# The large body: sparse, so it costs no disk until read. Read once here, so that every row finds it in the page
# cache: the first reader of a sparse file pays for the kernel filling its pages (about half the speed), and that
# was always the first row (the manager's) of a run.
truncate -s "$STREAM_BYTES" "$WORK/www/big.bin"
cat "$WORK/www/big.bin" >/dev/null
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
cat >"$WORK/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    default_type application/octet-stream;
    types { text/event-stream sse; }
    client_body_temp_path $WORK/tmp/body;
    proxy_temp_path $WORK/tmp/proxy;
    fastcgi_temp_path $WORK/tmp/fastcgi;
    uwsgi_temp_path $WORK/tmp/uwsgi;
    scgi_temp_path $WORK/tmp/scgi;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
    }
}
EOF
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK" &
NGINX_PID=$!
SERVER="http://127.0.0.1:$PORT"
for _ in $(seq 100); do
    curl -sf -o /dev/null -r 0-0 "$SERVER/big.bin" && break
    sleep 0.1
done
curl -sf -o /dev/null -r 0-0 "$SERVER/big.bin" || { echo "nginx does not serve:" >&2; cat "$WORK/error.log" >&2; exit 1; }
SSE_URL="$SERVER/events.sse"
BYTES_URL="$SERVER/big.bin"
# The same large stream from the fault fixture as well (Python, 1 MiB writes): the kernel hands its bytes
# over differently from nginx's sendfile, and curl -N reads them with far less CPU, so its ratio is shown too.
python3 "$ROOT/Tests/Fixtures/fault_server.py" --host 127.0.0.1 --port 0 --port-file "$WORK/port" \
    >"$WORK/fixture.log" 2>&1 </dev/null &
FIXTURE_PID=$!
for _ in $(seq 300); do
    [[ -s "$WORK/port" ]] && break
    sleep 0.1
done
[[ -s "$WORK/port" ]] || { echo "the fixture server did not start:" >&2; cat "$WORK/fixture.log" >&2; exit 1; }
FIXTURE_BYTES_URL="http://127.0.0.1:$(tr -d '[:space:]' <"$WORK/port")/stream-bytes?size=$STREAM_BYTES&chunk=1048576"
# The event stream's length: event i is "id: i\ndata: <32 letters>\n\n", 45 bytes and i's digits.
SSE_BYTES=$(python3 -c 'import sys
n = int(sys.argv[1]); total = 45 * n; low = 1
while low <= n:
    high = min(n, low * 10 - 1); total += len(str(low)) * (high - low + 1); low *= 10
print(total)' "$SSE_EVENTS")
RAW="$WORK/raw.jsonl"
: >"$RAW"

echo "nginx on $SERVER; $RUNS run(s) per row; $SSE_EVENTS events; $STREAM_BYTES bytes streamed" >&2
# curl -N on a large stream: its speed, CPU and peak memory, as one JSON row of MODE.
curl_bytes() {
    local url=$1 mode=$2 stats seconds bytes peak user system
    echo "  run $run: curl -N $mode" >&2
    if stats=$(/usr/bin/time -f '%M %U %S' -o "$WORK/time.txt" \
        curl -N -s -f -o /dev/null -w '%{time_total} %{size_download}' "$url"); then
        read -r seconds bytes <<<"$stats"
        read -r peak user system <<<"$(tail -1 "$WORK/time.txt")"
        if [[ "$bytes" == "$STREAM_BYTES" ]]; then
            python3 -c 'import json, sys
seconds, nbytes, peak, user, system = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
print(json.dumps({"client": "curl -N", "mode": sys.argv[6], "bytes": nbytes, "seconds": seconds,
                  "megabytesPerSecond": nbytes / seconds / 1048576, "cpuSeconds": user + system,
                  "peakRSSKilobytes": peak}))' "$seconds" "$bytes" "$peak" "$user" "$system" "$mode" >>"$RAW"
            return
        fi
        echo "curl -N received $bytes bytes, expected $STREAM_BYTES" >&2
    fi
    echo "{\"client\":\"curl -N\",\"mode\":\"$mode\",\"failed\":true}" >>"$RAW"
}

for run in $(seq "$RUNS"); do
    for client in curl ahc urlsession; do
        echo "  run $run: $client sse" >&2
        "$BENCH" --client "$client" --mode sse --url "$SSE_URL" --expect "$SSE_EVENTS" >>"$RAW" \
            || echo "{\"client\":\"$client\",\"mode\":\"sse\",\"failed\":true}" >>"$RAW"
    done
    echo "  run $run: curl -N sse (no parsing: the ceiling)" >&2
    if stats=$(curl -N -s -f -o /dev/null -w '%{time_total} %{size_download}' "$SSE_URL") \
        && read -r seconds bytes <<<"$stats" && [[ "$bytes" == "$SSE_BYTES" ]]; then
        python3 -c 'import json, sys
seconds, nbytes, events = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
print(json.dumps({"client": "curl -N", "mode": "sse", "bytes": nbytes, "seconds": seconds, "events": events,
                  "eventsPerSecond": events / seconds, "megabytesPerSecond": nbytes / seconds / 1048576}))' \
            "$seconds" "$bytes" "$SSE_EVENTS" >>"$RAW"
    else
        echo "curl -N on the event stream failed or received ${bytes:-no} bytes, expected $SSE_BYTES" >&2
        echo '{"client":"curl -N","mode":"sse","failed":true}' >>"$RAW"
    fi
    for client in curl urlsession ahc; do
        echo "  run $run: $client bytes" >&2
        "$BENCH" --client "$client" --mode bytes --url "$BYTES_URL" --expect "$STREAM_BYTES" >>"$RAW" \
            || echo "{\"client\":\"$client\",\"mode\":\"bytes\",\"failed\":true}" >>"$RAW"
    done
    curl_bytes "$BYTES_URL" bytes
    echo "  run $run: curl bytes from the fixture" >&2
    "$BENCH" --client curl --mode bytes --url "$FIXTURE_BYTES_URL" --expect "$STREAM_BYTES" \
        | sed 's/"mode":"bytes"/"mode":"bytes-fixture"/' >>"$RAW" \
        || echo '{"client":"curl","mode":"bytes-fixture","failed":true}' >>"$RAW"
    curl_bytes "$FIXTURE_BYTES_URL" bytes-fixture
done

mkdir -p Benchmarks/results
python3 - "$RAW" "$ROOT/Benchmarks/results/bench-streaming.json" "$RUNS" "$SSE_EVENTS" "$STREAM_BYTES" <<'EOF'
import json, statistics, sys
raw_path, out_path, runs, sse_events, stream_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows = [json.loads(line) for line in open(raw_path) if line.strip()]

def med(client, mode, key):
    values = [r[key] for r in rows if r["client"] == client and r["mode"] == mode and r.get(key) is not None and not r.get("failed")]
    return statistics.median(values) if values else None

def growth(r):
    return r["peakRSSKilobytes"] - r["startRSSKilobytes"] if "startRSSKilobytes" in r else None

for r in rows:
    if not r.get("failed"):
        r["rssGrowthKilobytes"] = growth(r)

sse_clients = ["curl", "ahc", "urlsession", "curl -N"]
bytes_clients = ["curl", "curl -N", "urlsession", "ahc"]
summary = {"runs": runs, "sseEvents": sse_events, "sseDataSize": 32, "streamBytes": stream_bytes,
           "sse": {}, "bytes": {}}
for c in sse_clients:
    if med(c, "sse", "eventsPerSecond") is not None:
        summary["sse"][c] = {k: med(c, "sse", k) for k in
                             ["eventsPerSecond", "seconds", "megabytesPerSecond", "cpuSeconds", "peakRSSKilobytes",
                              "rssGrowthKilobytes"]}
for c in bytes_clients:
    if med(c, "bytes", "megabytesPerSecond") is not None:
        summary["bytes"][c] = {k: med(c, "bytes", k) for k in
                               ["megabytesPerSecond", "seconds", "cpuSeconds", "peakRSSKilobytes", "rssGrowthKilobytes"]}
summary["bytesFromFixture"] = {}
for c in ["curl", "curl -N"]:
    if med(c, "bytes-fixture", "megabytesPerSecond") is not None:
        summary["bytesFromFixture"][c] = {k: med(c, "bytes-fixture", k) for k in
                                          ["megabytesPerSecond", "seconds", "cpuSeconds", "peakRSSKilobytes"]}
summary["failures"] = [r for r in rows if r.get("failed")]
summary["raw"] = rows

def get(section, c, key):
    return summary[section].get(c, {}).get(key)

def fmt(v, spec="{:,.0f}"):
    return "—" if v is None else spec.format(v)

def ratio(a, b):
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}×"

def mb(kb):
    return None if kb is None else kb / 1024

names = {"curl": "manager + CurlTransport", "urlsession": "manager + URLSessionTransport (information)",
         "ahc": "async-http-client", "curl -N": "curl -N -o /dev/null"}

print()
print(f"Server-sent events: {sse_events:,} events of 32 bytes of data, from nginx (loopback); "
      f"median of {runs} run(s)")
print()
print("| client | events/s | vs AHC | MB/s | CPU s | peak RSS MB | RSS growth MB |")
print("|---|---:|---:|---:|---:|---:|---:|")
ahc_eps = get("sse", "ahc", "eventsPerSecond")
sse_names = dict(names, **{"curl -N": "curl -N -o /dev/null (no parsing: the ceiling)"})
for c in sse_clients:
    eps = get("sse", c, "eventsPerSecond")
    print(f"| {sse_names[c]} | {fmt(eps)} | {ratio(eps, ahc_eps)} | {fmt(get('sse', c, 'megabytesPerSecond'), '{:,.1f}')} | "
          f"{fmt(get('sse', c, 'cpuSeconds'), '{:.2f}')} | {fmt(mb(get('sse', c, 'peakRSSKilobytes')), '{:,.1f}')} | "
          f"{fmt(mb(get('sse', c, 'rssGrowthKilobytes')), '{:,.1f}')} |")
print("(async-http-client splits the bytes into events itself; the manager's rows go through `response.events`.)")

print()
print(f"Large stream: {stream_bytes:,} bytes ({stream_bytes / 1048576:,.0f} MiB) from nginx, read as chunks and "
      f"dropped; median of {runs} run(s)")
print()
print("| client | MB/s | vs curl -N | seconds | CPU s | peak RSS MB | RSS growth MB |")
print("|---|---:|---:|---:|---:|---:|---:|")
curl_n = get("bytes", "curl -N", "megabytesPerSecond")
for c in bytes_clients:
    rate = get("bytes", c, "megabytesPerSecond")
    print(f"| {names[c]} | {fmt(rate, '{:,.1f}')} | {ratio(rate, curl_n)} | {fmt(get('bytes', c, 'seconds'), '{:.2f}')} | "
          f"{fmt(get('bytes', c, 'cpuSeconds'), '{:.2f}')} | {fmt(mb(get('bytes', c, 'peakRSSKilobytes')), '{:,.1f}')} | "
          f"{fmt(mb(get('bytes', c, 'rssGrowthKilobytes')), '{:,.1f}')} |")
print("(peak RSS: the process's VmHWM; curl's from /usr/bin/time. RSS growth: the peak minus the resident "
      "memory before the request.)")

print()
print("The same stream from the fault fixture (Python, 1 MiB writes):")
print()
print("| client | MB/s | vs curl -N | seconds | CPU s | peak RSS MB |")
print("|---|---:|---:|---:|---:|---:|")
curl_n_fixture = get("bytesFromFixture", "curl -N", "megabytesPerSecond")
for c in ["curl", "curl -N"]:
    rate = get("bytesFromFixture", c, "megabytesPerSecond")
    print(f"| {names[c]} | {fmt(rate, '{:,.1f}')} | {ratio(rate, curl_n_fixture)} | "
          f"{fmt(get('bytesFromFixture', c, 'seconds'), '{:.2f}')} | {fmt(get('bytesFromFixture', c, 'cpuSeconds'), '{:.2f}')} | "
          f"{fmt(mb(get('bytesFromFixture', c, 'peakRSSKilobytes')), '{:,.1f}')} |")

# The goals of the streaming work, each as a ratio from this run.
goals = []
def goal(name, value, target, at_least=True, unit="×"):
    met = None if value is None else (value >= target if at_least else value <= target)
    goals.append({"goal": name, "value": value, "target": target, "atLeast": at_least, "met": met})
    shown = "—" if value is None else (f"{value:.2f}{unit}" if unit == "×" else f"{value:+.0f} {unit}")
    sign = "≥" if at_least else "≤"
    target_shown = f"{target:g}{unit}" if unit == "×" else f"{target:g} {unit}"
    verdict = "—" if met is None else ("met" if met else "MISSED")
    print(f"| {name} | {shown} | {sign} {target_shown} | {verdict} |")

def r(a, b):
    return None if a is None or b is None or b == 0 else a / b

print()
print("| goal | this run | target | |")
print("|---|---:|---:|---|")
goal("manager + CurlTransport ÷ async-http-client, server-sent events/s",
     r(get("sse", "curl", "eventsPerSecond"), ahc_eps), 1.5)
goal(f"manager + CurlTransport ÷ curl -N, {stream_bytes / 1048576:,.0f} MiB stream throughput (nginx)",
     r(get("bytes", "curl", "megabytesPerSecond"), curl_n), 0.9)
goal(f"manager + CurlTransport ÷ curl -N, {stream_bytes / 1048576:,.0f} MiB stream throughput (fault fixture)",
     r(get("bytesFromFixture", "curl", "megabytesPerSecond"), curl_n_fixture), 0.9)
summary["goals"] = goals
if summary["failures"]:
    print("Failed runs:", ", ".join(f"{f['client']} {f['mode']}" for f in summary["failures"]))
json.dump(summary, open(out_path, "w"), indent=2, sort_keys=True)
print(f"\nWrote {out_path}")
EOF
