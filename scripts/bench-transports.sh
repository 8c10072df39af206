#!/usr/bin/env bash
# Compares the transports against async-http-client, wrk and curl on a local nginx.
# Usage: scripts/bench-transports.sh [--quick]
#   full run: 3 runs per row (medians), 5 s per throughput run, a 1 GB download.
#   --quick:  1 run per row, 3 s per throughput run, a 64 MB download.
# Rows: wrk (the machine's ceiling), libcurl-c (a bare libcurl multi loop in C: libcurl's ceiling), the Swift
# clients (each transport bare and through the manager; curl also on its own executor; raw URLSession),
# and curl -o for the download; an h2 row (64 concurrent GETs over HTTP/2 with TLS, manager + CurlTransport
# vs async-http-client); then the manager's own CPU cost per call with MockTransport, and every goal's ratio. Installs nginx, wrk and the libcurl headers with apt when missing. Prints a table; writes Benchmarks/results/bench-transports.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

RUNS=3
DURATION=5
DOWNLOAD_MB=1024
if [[ "${1:-}" == "--quick" ]]; then
    RUNS=1
    DURATION=3
    DOWNLOAD_MB=64
fi

missing=()
command -v nginx >/dev/null || missing+=(nginx-light)
command -v wrk >/dev/null || missing+=(wrk)
command -v pkg-config >/dev/null || missing+=(pkg-config)
pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
command -v openssl >/dev/null || missing+=(openssl)
if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

echo "Building serverapi-transport-bench (release)…" >&2
# A path dependency's new files are only noticed when a manifest changes.
touch Package.swift Benchmarks/Package.swift
swift build -c release --package-path Benchmarks --product serverapi-transport-bench >&2
swift build -c release --package-path Benchmarks --product serverapi-bench >&2
BIN="$(swift build -c release --package-path Benchmarks --show-bin-path)"
BENCH="$BIN/serverapi-transport-bench"

WORK=$(mktemp -d /tmp/bench-transports.XXXXXX)
NGINX_PID=""
cleanup() {
    if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

mkdir -p "$WORK/www" "$WORK/tmp"
# The libcurl ceiling: a bare multi loop in C (Benchmarks/reference), built with the toolchain's C compiler.
CC=${CC:-$(command -v cc || command -v clang)}
"$CC" -O2 Benchmarks/reference/curl_multi_loop.c $(pkg-config --cflags --libs libcurl) -o "$WORK/curl_multi_loop"
# nginx's worker runs as an unprivileged user: it must be able to read the files.
chmod 755 "$WORK" "$WORK/www"
python3 - "$WORK/www/small.json" <<'EOF'
import json, sys
# A 1 KB JSON document: a few records, padded to exactly 1024 bytes.
doc = {"code": 0, "msg": "ok", "data": [{"id": i, "name": f"item-{i}", "price": i * 1.5} for i in range(20)], "pad": ""}
doc["pad"] = "x" * (1024 - len(json.dumps(doc)))
open(sys.argv[1], "w").write(json.dumps(doc))
EOF
# The download file is generated on the spot (sparse, so it costs no disk until read).
truncate -s "${DOWNLOAD_MB}M" "$WORK/www/big.bin"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
H2_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
# The h2 row's server certificate, for 127.0.0.1, signed by a CA made here (the clients trust it).
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=bench CA" -keyout "$WORK/ca.key" -out "$WORK/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$WORK/server.key" -out "$WORK/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$WORK/server.ext"
openssl x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -days 2 \
    -extfile "$WORK/server.ext" -out "$WORK/server.pem" 2>/dev/null

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
    keepalive_timeout 65;
    keepalive_requests 10000000;
    default_type application/octet-stream;
    types { application/json json; }
    client_body_temp_path $WORK/tmp/body;
    proxy_temp_path $WORK/tmp/proxy;
    fastcgi_temp_path $WORK/tmp/fastcgi;
    uwsgi_temp_path $WORK/tmp/uwsgi;
    scgi_temp_path $WORK/tmp/scgi;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
    }
    server {
        # nginx 1.22 syntax (1.25 and later: \`listen … ssl;\` and \`http2 on;\`).
        listen 127.0.0.1:$H2_PORT ssl http2;
        ssl_certificate $WORK/server.pem;
        ssl_certificate_key $WORK/server.key;
        root $WORK/www;
    }
}
EOF
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK" &
NGINX_PID=$!
for _ in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/small.json" && break
    sleep 0.1
done
curl -sf -o /dev/null "http://127.0.0.1:$PORT/small.json" || { echo "nginx does not serve:" >&2; cat "$WORK/error.log" >&2; exit 1; }
SMALL="http://127.0.0.1:$PORT/small.json"
SMALL_H2="https://127.0.0.1:$H2_PORT/small.json"
curl -sf --http2 --cacert "$WORK/ca.pem" -o /dev/null "$SMALL_H2" || { echo "nginx does not serve h2:" >&2; cat "$WORK/error.log" >&2; exit 1; }
BIG="http://127.0.0.1:$PORT/big.bin"
RAW="$WORK/raw.jsonl"
: >"$RAW"

echo "nginx on 127.0.0.1:$PORT; $RUNS run(s) per row, ${DURATION}s each, ${DOWNLOAD_MB} MB download" >&2
for run in $(seq "$RUNS"); do
    for connections in 64 1; do
        rps=$(wrk -t1 -c"$connections" -d"${DURATION}s" "$SMALL" | awk '/Requests\/sec/ {print $2}')
        mode=$([[ $connections == 64 ]] && echo c64 || echo seq)
        echo "{\"client\":\"wrk\",\"mode\":\"$mode\",\"requestsPerSecond\":$rps}" >>"$RAW"
    done
    for connections in 64 1; do
        echo "  run $run: libcurl-c $([[ $connections == 64 ]] && echo c64 || echo seq)" >&2
        "$WORK/curl_multi_loop" "$SMALL" "$connections" "$DURATION" >>"$RAW" \
            || echo "{\"client\":\"libcurl-c\",\"mode\":\"$([[ $connections == 64 ]] && echo c64 || echo seq)\",\"failed\":true}" >>"$RAW"
    done
    for client in curl curl-manager curl-executor curl-manager-executor urlsession urlsession-manager urlsession-raw ahc; do
        for mode in seq c64; do
            echo "  run $run: $client $mode" >&2
            "$BENCH" --client "$client" --mode "$mode" --url "$SMALL" --duration "$DURATION" >>"$RAW" \
                || echo "{\"client\":\"$client\",\"mode\":\"$mode\",\"failed\":true}" >>"$RAW"
        done
        echo "  run $run: $client download" >&2
        "$BENCH" --client "$client" --mode download --url "$BIG" --output "$WORK/download.bin" >>"$RAW" \
            || echo "{\"client\":\"$client\",\"mode\":\"download\",\"failed\":true}" >>"$RAW"
    done
    for client in curl-manager ahc; do
        echo "  run $run: $client h2" >&2
        "$BENCH" --client "$client" --mode h2 --url "$SMALL_H2" --ca "$WORK/ca.pem" --duration "$DURATION" >>"$RAW" \
            || echo "{\"client\":\"$client\",\"mode\":\"h2\",\"failed\":true}" >>"$RAW"
    done
    echo "  run $run: curl -o download" >&2
    rm -f "$WORK/download.bin"
    stats=$(/usr/bin/time -f '%M' -o "$WORK/time.txt" \
        curl -s -o "$WORK/download.bin" -w '%{time_total} %{size_download}' "$BIG")
    rm -f "$WORK/download.bin"
    read -r seconds bytes <<<"$stats"
    echo "{\"client\":\"curl -o\",\"mode\":\"download\",\"seconds\":$seconds,\"bytes\":$bytes,\"peakRSSKilobytes\":$(tail -1 "$WORK/time.txt")}" >>"$RAW"
done

# The manager's own CPU cost per call with MockTransport (the core benchmark's overhead rows), same run.
echo "  manager overhead with MockTransport" >&2
"$BIN/serverapi-bench" --only overhead --repetitions $((RUNS == 1 ? 5 : 15)) --output "$WORK/bench-core.json" >&2

mkdir -p Benchmarks/results
python3 - "$RAW" "$ROOT/Benchmarks/results/bench-transports.json" "$RUNS" "$DURATION" "$DOWNLOAD_MB" "$WORK/bench-core.json" <<'EOF'
import json, statistics, sys
raw_path, out_path, runs, duration, download_mb = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
core = json.load(open(sys.argv[6]))
rows = [json.loads(line) for line in open(raw_path) if line.strip()]

def med(client, mode, key):
    values = [r[key] for r in rows if r["client"] == client and r["mode"] == mode and r.get(key) is not None and not r.get("failed")]
    return statistics.median(values) if values else None

clients = ["curl", "curl-manager", "curl-executor", "curl-manager-executor", "urlsession", "urlsession-manager",
           "urlsession-raw", "ahc"]
summary = {"runs": runs, "durationSeconds": duration, "downloadMegabytes": download_mb, "clients": {}}
for c in clients + ["wrk", "libcurl-c", "curl -o"]:
    entry = {}
    for mode in ["seq", "c64", "h2"]:
        rps = med(c, mode, "requestsPerSecond")
        if rps is not None:
            entry[mode] = {"requestsPerSecond": rps, "p50Microseconds": med(c, mode, "p50Microseconds"),
                           "p99Microseconds": med(c, mode, "p99Microseconds"), "peakRSSKilobytes": med(c, mode, "peakRSSKilobytes")}
    seconds = med(c, "download", "seconds")
    if seconds is not None:
        nbytes = med(c, "download", "bytes")
        entry["download"] = {"seconds": seconds, "bytes": nbytes, "megabytesPerSecond": nbytes / seconds / 1048576,
                             "peakRSSKilobytes": med(c, "download", "peakRSSKilobytes")}
    summary["clients"][c] = entry
summary["failures"] = [r for r in rows if r.get("failed")]

def get(c, mode, key):
    return summary["clients"].get(c, {}).get(mode, {}).get(key)

def fmt(v, spec="{:,.0f}"):
    return "—" if v is None else spec.format(v)

def ratio(a, b):
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}×"

print()
print(f"Transports, nginx on loopback; median of {runs} run(s), {duration:g} s each; ratios to async-http-client (AHC)")
print()
print("| client | seq req/s | vs AHC | p50 µs | p99 µs | c64 req/s | vs AHC | vs wrk | download MB/s | vs curl -o | peak RSS MB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
wrk64 = get("wrk", "c64", "requestsPerSecond")
curl_o = get("curl -o", "download", "megabytesPerSecond")
for c in ["wrk", "libcurl-c"] + clients + ["curl -o"]:
    seq = get(c, "seq", "requestsPerSecond"); c64 = get(c, "c64", "requestsPerSecond")
    dl = get(c, "download", "megabytesPerSecond"); rss = get(c, "download", "peakRSSKilobytes")
    print(f"| {c} | {fmt(seq)} | {ratio(seq, get('ahc', 'seq', 'requestsPerSecond'))} | "
          f"{fmt(get(c, 'seq', 'p50Microseconds'))} | {fmt(get(c, 'seq', 'p99Microseconds'))} | "
          f"{fmt(c64)} | {ratio(c64, get('ahc', 'c64', 'requestsPerSecond'))} | {ratio(c64, wrk64)} | "
          f"{fmt(dl)} | {ratio(dl, curl_o)} | {fmt(None if rss is None else rss / 1024, '{:,.1f}')} |")
print()
print("HTTP/2 over TLS, 64 concurrent GETs of small.json on one multiplexed connection:")
for c in ["curl-manager", "ahc"]:
    print(f"  {c}: {fmt(get(c, 'h2', 'requestsPerSecond'))} req/s, p50 {fmt(get(c, 'h2', 'p50Microseconds'))} µs, "
          f"p99 {fmt(get(c, 'h2', 'p99Microseconds'))} µs")

def overhead(bare, managed, mode):
    a, b = get(bare, mode, "requestsPerSecond"), get(managed, mode, "requestsPerSecond")
    return None if a is None or b is None else (a - b) / a * 100
print()
for bare in ["curl", "curl-executor", "urlsession"]:
    managed = bare.replace("curl", "curl-manager") if bare.startswith("curl") else "urlsession-manager"
    print(f"Manager overhead over bare {bare}: seq {fmt(overhead(bare, managed, 'seq'), '{:+.1f}')} %, "
          f"c64 {fmt(overhead(bare, managed, 'c64'), '{:+.1f}')} % (throughput lost)")

# The goals of the pipeline work, each as a ratio from this run.
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

rps = lambda c, m: get(c, m, "requestsPerSecond")
p50 = lambda c: get(c, "seq", "p50Microseconds")
print()
print("| goal | this run | target | |")
print("|---|---:|---:|---|")
for variant, label in [("curl-manager", "manager + CurlTransport"), ("curl-manager-executor", "manager + CurlTransport, executor")]:
    goal(f"{label} ÷ async-http-client, c64", r(rps(variant, "c64"), rps("ahc", "c64")), 1.5)
    goal(f"{label} ÷ async-http-client, c1", r(rps(variant, "seq"), rps("ahc", "seq")), 1.5)
    goal(f"{label} ÷ wrk, c64", r(rps(variant, "c64"), rps("wrk", "c64")), 0.6)
    bare = variant.replace("-manager", "")
    delta = None if p50(variant) is None or p50(bare) is None else p50(variant) - p50(bare)
    goal(f"{label}: sequential p50 − bare p50", delta, 10, at_least=False, unit="µs")
    goal(f"{label} ÷ bare, c64 throughput", r(rps(variant, "c64"), rps(bare, "c64")), 0.9)
goal("manager + CurlTransport(.http2) ÷ async-http-client, h2 c64", r(rps("curl-manager", "h2"), rps("ahc", "h2")), 1.5)
goal("bare CurlTransport ÷ bare C libcurl loop, c64", r(rps("curl", "c64"), rps("libcurl-c", "c64")), 0.85)
goal("bare CurlTransport, executor ÷ bare C libcurl loop, c64", r(rps("curl-executor", "c64"), rps("libcurl-c", "c64")), 0.85)
overhead_cpu = core.get("managerOverhead", {}).get("overheadCPUMicroseconds")
goal("manager CPU per call over MockTransport", overhead_cpu, 5, at_least=False, unit="µs")
goal("manager + URLSessionTransport ÷ raw URLSession, c1", r(rps("urlsession-manager", "seq"), rps("urlsession-raw", "seq")), 0.95)
goal("manager + URLSessionTransport ÷ raw URLSession, c64", r(rps("urlsession-manager", "c64"), rps("urlsession-raw", "c64")), 0.95)
summary["goals"] = goals
summary["managerOverheadCPUMicroseconds"] = overhead_cpu
if summary["failures"]:
    print("Failed runs:", ", ".join(f"{r['client']} {r['mode']}" for r in summary["failures"]))
json.dump(summary, open(out_path, "w"), indent=2, sort_keys=True)
print(f"\nWrote {out_path}")
EOF
