#!/usr/bin/env bash
# Compares the transports against async-http-client, wrk and curl on a local nginx.
# Usage: scripts/bench-transports.sh [--quick] [--scaling-only] [--levels "1 64 256 1000"] [--clients "…"] [--libcurl-backports]
#        scripts/bench-transports.sh --http3 [--quick] [--levels "1 64"]
#   full run: 3 runs per row (medians), 5 s per throughput run, a 1 GB download.
#   --quick:  1 run per row, 3 s per throughput run, a 64 MB download.
#   --scaling-only: only the concurrency table (c1, c64, c256, c1000) and issue 26's goals.
#   --levels, --clients: the concurrency table's levels and clients (a smoke run: --levels "1 64").
# Rows: wrk (the machine's ceiling), libcurl-c (a bare libcurl multi loop in C: libcurl's ceiling), the Swift
# clients (each transport bare and through the manager; curl also on its own executor; raw URLSession),
# and curl -o for the download; an h2 row (64 concurrent GETs over HTTP/2 with TLS, manager + CurlTransport
# vs async-http-client); then the manager's own CPU cost per call with MockTransport, and every goal's ratio.
# Then the concurrency table: c1, c64, c256 and c1000 for wrk, the C libcurl loop (perform + poll, and the socket
# interface on epoll), async-http-client, the bare CurlTransport with 1 loop and with its default loops (one per
# core; adaptive (the default), by origin: `curl-bo`, and round-robin: `curl-rr`) and manager + CurlTransport (the
# same three: `curl-manager`, `curl-manager-bo`, `curl-manager-rr`): req/s, p50/p99, CPU µs per request (the client process's getrusage user +
# system time over the measured seconds, per request) and peak RSS; then issue 26's goals, from the same run. Installs nginx, wrk and the libcurl headers with apt when missing. Prints a table; writes Benchmarks/results/bench-transports.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

RUNS=3
DURATION=5
DOWNLOAD_MB=1024
SCALING_ONLY=0
LEVELS="1 64 256 1000"
SCALING_CLIENTS="wrk libcurl-c libcurl-c-loops libcurl-c-epoll ahc curl-1loop curl curl-bo curl-rr curl-manager curl-manager-bo curl-manager-rr"
# --libcurl-backports: the libcurl clients (the C loops and CurlTransport's rows) run again on Debian 12's
# bookworm-backports libcurl (8.14, unpacked by scripts/libcurl-backports.sh), labelled `@8.14`, in the same run.
# --instructions: instead of the tables, the instructions a request costs (valgrind's callgrind, which a busy
# machine does not disturb), at c1 and c64 on one loop: the C libcurl loop, the bare CurlTransport and the manager
# over it (Benchmarks' serverapi-curl-count, built with the Swift runtime linked statically, in
# Benchmarks/.build-static: valgrind 3.19 cannot run the dynamically linked Swift binaries). Each client runs
# twice, with more requests the second time, and the difference is divided by the difference in requests, so that
# start-up and shut-down cancel out. Prints the table and the ratios to the C loop (issue 50's goal: ≤ 1.3×).
# --locks: instead of the tables, the lock acquisitions a request costs, at c1 and c64, of the bare CurlTransport
# and the manager over it (the same build): in total, nested (taken while the thread held another), and by the
# function that took them. Every lock of the package goes through one function that calls ThreadSanitizer's hooks
# (Locked.swift); a preloaded library (Benchmarks/reference/lock_count.c) defines the hooks and counts.
# --http3: instead of the tables, HTTP/3 against HTTP/2 and HTTP/1.1 (both over TLS), all three from one server
# (Benchmarks/reference/h123_server.py: hypercorn, one Python process, in a venv of its own in .build/bench-http3/),
# at c1 and c64 (--levels): the C libcurl loop, the bare CurlTransport and manager + CurlTransport, on Debian 12's
# bookworm-backports GnuTLS libcurl 8.14 with ngtcp2 and nghttp3 (scripts/libcurl-gnutls.sh; Benchmarks built
# against it in Benchmarks/.build-gnutls, the default build untouched). req/s, p50/p99, the client's CPU µs per
# request and peak RSS as in the concurrency table, the server's CPU use over each client's run and the connections
# the client opened (the server counts them). Medians of 3 runs, 5 s each (--quick: 1 run, 3 s). Writes
# Benchmarks/results/bench-http3.json. Exits 3 when the system is not Debian 12.
BACKPORTS=0
INSTRUCTIONS=0
LOCKS=0
HTTP3=0
LEVELS_GIVEN=0
while (($#)); do
    case "$1" in
    --quick) RUNS=1; DURATION=3; DOWNLOAD_MB=64 ;;
    --scaling-only) SCALING_ONLY=1 ;;
    --levels) LEVELS="$2"; LEVELS_GIVEN=1; shift ;;
    --clients) SCALING_CLIENTS="$2"; shift ;;
    --libcurl-backports) BACKPORTS=1 ;;
    --instructions) INSTRUCTIONS=1 ;;
    --locks) LOCKS=1 ;;
    --http3) HTTP3=1 ;;
    *) echo "usage: $0 [--quick] [--scaling-only] [--levels \"1 64 256 1000\"] [--clients \"…\"] [--libcurl-backports] [--instructions] [--locks] [--http3]" >&2; exit 1 ;;
    esac
    shift
done
# c1000 needs a descriptor per connection on both sides, and more.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

if ((HTTP3)); then
    # shellcheck source=/dev/null
    . /etc/os-release
    if [[ ${ID:-} != debian || ${VERSION_ID:-} != 12 ]]; then
        echo "bench-transports.sh --http3: needs Debian 12 (its bookworm-backports GnuTLS libcurl 8.14 has HTTP/3:" \
            "scripts/libcurl-gnutls.sh); this is ${PRETTY_NAME:-an unknown system}" >&2
        exit 3
    fi
    status=0
    GNUTLS_ENV=$(scripts/libcurl-gnutls.sh) || status=$?
    ((status == 0)) || exit "$status"
    ((LEVELS_GIVEN)) || LEVELS="1 64"
    missing=()
    command -v pkg-config >/dev/null || missing+=(pkg-config)
    pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
    command -v openssl >/dev/null || missing+=(openssl)
    probe=$(mktemp -d)
    python3 -m venv "$probe/venv" >/dev/null 2>&1 || missing+=(python3-venv)
    rm -rf "$probe"
    if ((${#missing[@]})); then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    # The server's venv, made again when the pinned requirements change (as scripts/test-server.sh does its own).
    VENV="$ROOT/.build/bench-http3/venv"
    wanted=$(sha256sum scripts/requirements-bench-http3.txt | cut -d' ' -f1)
    if [[ ! -x $VENV/bin/python || $(cat "$VENV/.requirements.sha256" 2>/dev/null) != "$wanted" ]]; then
        echo "Installing the server (scripts/requirements-bench-http3.txt) in $VENV…" >&2
        [[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
        "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r scripts/requirements-bench-http3.txt >&2
        echo "$wanted" >"$VENV/.requirements.sha256"
    fi

    touch Package.swift Benchmarks/Package.swift
    H3_BUILD=(-c release --package-path Benchmarks --scratch-path Benchmarks/.build-gnutls)
    echo "Building serverapi-transport-bench (release) against the GnuTLS libcurl in Benchmarks/.build-gnutls…" >&2
    (eval "$GNUTLS_ENV" && swift build "${H3_BUILD[@]}" --product serverapi-transport-bench >&2)
    BENCH="$(swift build "${H3_BUILD[@]}" --show-bin-path)/serverapi-transport-bench"
    if ! grep -q 'libcurl-gnutls\.so\.4' <<<"$(ldd "$BENCH")"; then
        echo "bench-transports.sh --http3: $BENCH is not linked against libcurl-gnutls.so.4" >&2
        exit 1
    fi

    WORK=$(mktemp -d /tmp/bench-http3.XXXXXX)
    SERVER_PID=""
    cleanup_http3() {
        if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
        rm -rf "$WORK"
    }
    trap cleanup_http3 EXIT INT TERM
    CC=${CC:-$(command -v cc || command -v clang)}
    # shellcheck disable=SC2046
    (eval "$GNUTLS_ENV" && "$CC" -O2 Benchmarks/reference/curl_multi_loop.c $(pkg-config --cflags --libs libcurl) \
        -lpthread -o "$WORK/curl_multi_loop")
    # The certificate for 127.0.0.1, signed by a CA made here (the clients trust it), and the 1 KB document of the
    # other tables.
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=bench CA" -keyout "$WORK/ca.key" -out "$WORK/ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$WORK/server.key" -out "$WORK/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' >"$WORK/server.ext"
    openssl x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -days 2 \
        -extfile "$WORK/server.ext" -out "$WORK/server.pem" 2>/dev/null
    python3 - "$WORK/small.json" <<'EOF'
import json, sys
doc = {"code": 0, "msg": "ok", "data": [{"id": i, "name": f"item-{i}", "price": i * 1.5} for i in range(20)], "pad": ""}
doc["pad"] = "x" * (1024 - len(json.dumps(doc)))
open(sys.argv[1], "w").write(json.dumps(doc))
EOF
    # One port number, free for TCP and for UDP: the same URL for every protocol.
    PORT=$(python3 - <<'EOF'
import socket
while True:
    tcp, udp = socket.socket(), socket.socket(type=socket.SOCK_DGRAM)
    tcp.bind(("127.0.0.1", 0))
    port = tcp.getsockname()[1]
    try:
        udp.bind(("127.0.0.1", port))
        break
    except OSError:
        pass
    finally:
        tcp.close()
        udp.close()
print(port)
EOF
    )
    "$VENV/bin/python" Benchmarks/reference/h123_server.py --port "$PORT" --cert "$WORK/server.pem" \
        --key "$WORK/server.key" --body "$WORK/small.json" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    URL="https://127.0.0.1:$PORT/small.json"
    for _ in $(seq 100); do
        curl -sf --cacert "$WORK/ca.pem" -o /dev/null "$URL" && break
        sleep 0.1
    done
    curl -sf --http2 --cacert "$WORK/ca.pem" -o /dev/null "$URL" \
        || { echo "the server does not answer:" >&2; cat "$WORK/server.log" >&2; exit 1; }
    # The server's CPU seconds so far (utime + stime of /proc/PID/stat, in clock ticks).
    TICKS=$(getconf CLK_TCK)
    server_cpu() { awk -v ticks="$TICKS" '{ print ($14 + $15) / ticks }' "/proc/$SERVER_PID/stat"; }
    # The connections that have carried a request since the last query, this query's own included.
    server_connections() { curl -sf --cacert "$WORK/ca.pem" "https://127.0.0.1:$PORT/connections"; }
    LIBRARY=$(eval "$GNUTLS_ENV" && python3 -c '
import ctypes
curl = ctypes.CDLL("libcurl-gnutls.so.4")
curl.curl_version.restype = ctypes.c_char_p
print(curl.curl_version().decode())')
    echo "hypercorn on 127.0.0.1:$PORT (TCP and UDP); $LIBRARY; $RUNS run(s) per row, ${DURATION}s each; levels $LEVELS" >&2
    RAW="$WORK/raw.jsonl"
    : >"$RAW"
    LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
    # A row's JSON line with its client, protocol, the server's share of one core over the client's run (warm-up
    # included) and the connections the client opened; failed when another version than the one asked for answered.
    label() {
        python3 -c '
import json, sys
row = json.loads(sys.stdin.read())
client, protocol, busy, connections = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
row.update(client=client, protocol=protocol, serverBusy=busy, connections=connections)
if row.get("httpVersion", protocol) != protocol:
    row.update(failed=True, why="answered over HTTP/" + row["httpVersion"])
print(json.dumps(row))' "$@"
    }
    for run in $(seq "$RUNS"); do
        for level in $LEVELS; do
            mode=$([[ $level == 1 ]] && echo seq || echo "c$level")
            # Protocols and clients in turn, so that a busy spell of the machine does not fall on one of them only.
            for protocol in 3 2 1.1; do
                # HTTP/3 only: with `3`, libcurl would race a TCP connection against QUIC and keep the first.
                asked=$([[ $protocol == 3 ]] && echo 3-only || echo "$protocol")
                for client in libcurl-c curl curl-manager; do
                    echo "  run $run: $client HTTP/$protocol $mode" >&2
                    server_connections >/dev/null
                    before=$(server_cpu)
                    started=$(date +%s.%N)
                    out=""
                    if [[ $client == libcurl-c ]]; then
                        out=$(eval "$GNUTLS_ENV" && CURL_MULTI_LOOP_HTTP_VERSION=$asked CURL_MULTI_LOOP_CA="$WORK/ca.pem" \
                            timeout 300 "$WORK/curl_multi_loop" "$URL" "$level" "$DURATION") || out=""
                    else
                        out=$(eval "$GNUTLS_ENV" && timeout 300 "$BENCH" --client "$client" --mode "$mode" --url "$URL" \
                            --ca "$WORK/ca.pem" --http-version "$asked" --duration "$DURATION") || out=""
                    fi
                    busy=$(python3 -c 'import sys, time; print((float(sys.argv[2]) - float(sys.argv[1])) / (time.time() - float(sys.argv[3])))' \
                        "$before" "$(server_cpu)" "$started")
                    # Less the query that counts them.
                    opened=$(($(server_connections) - 1))
                    if [[ -n $out ]]; then
                        label "$client" "$protocol" "$busy" "$opened" <<<"$out" >>"$RAW"
                    else
                        echo "{\"client\":\"$client\",\"protocol\":\"$protocol\",\"mode\":\"$mode\",\"failed\":true}" >>"$RAW"
                    fi
                done
            done
        done
    done

    mkdir -p Benchmarks/results
    LOAD="$LOAD_BEFORE → $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 - "$RAW" "$ROOT/Benchmarks/results/bench-http3.json" "$RUNS" "$DURATION" "$LIBRARY" "$LOAD" "$(nproc)" <<'EOF'
import json, statistics, sys
raw_path, out_path, runs, duration, library = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
load, cores = sys.argv[6], sys.argv[7]
rows = [json.loads(line) for line in open(raw_path) if line.strip()]
keys = ["requestsPerSecond", "p50Microseconds", "p99Microseconds", "cpuMicrosecondsPerRequest", "peakRSSKilobytes",
        "serverBusy", "connections"]
names = {"libcurl-c": "C libcurl loop", "curl": "CurlTransport, bare", "curl-manager": "manager + CurlTransport"}

def median(client, protocol, mode, key):
    values = [r[key] for r in rows if r["client"] == client and r["protocol"] == protocol and r["mode"] == mode
              and not r.get("failed") and r.get(key) is not None]
    return statistics.median(values) if values else None

def fmt(v, spec="{:,.0f}"):
    return "—" if v is None else spec.format(v)

modes = []
for r in rows:
    if r["mode"] not in modes: modes.append(r["mode"])
summary = {"runs": runs, "durationSeconds": duration, "library": library, "loadAverage": load, "cores": cores,
           "rows": []}
print()
print(f"HTTP/3 against HTTP/2 and HTTP/1.1 (both over TLS): 1 KB JSON from hypercorn (one Python process) on loopback; "
      f"{library}; median of {runs} run(s), {duration:g} s each after 1 s of warm-up. Client CPU: the client process's "
      "user + system time per request. Server CPU: the server's CPU time over the client's run ÷ the run's wall time "
      "(1.00 is one core: the server is the ceiling). Connections: those that carried a request, counted by the server "
      f"(warm-up included). {cores} cores; load average {load} (1, 5, 15 min, before → after).")
print()
print("| calls at once | protocol | client | req/s | p50 µs | p99 µs | client CPU µs/req | peak RSS MB | server CPU | "
      "connections |")
print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
for mode in modes:
    for protocol in ["3", "2", "1.1"]:
        for client in ["libcurl-c", "curl", "curl-manager"]:
            v = {k: median(client, protocol, mode, k) for k in keys}
            if all(x is None for x in v.values()): continue
            each = [{k: r.get(k) for k in keys} for r in rows
                    if r["client"] == client and r["protocol"] == protocol and r["mode"] == mode and not r.get("failed")]
            summary["rows"].append({"client": client, "protocol": protocol, "mode": mode, **v, "eachRun": each})
            rss = v["peakRSSKilobytes"]
            print(f"| {1 if mode == 'seq' else mode[1:]} | HTTP/{protocol} | {names[client]} | "
                  f"{fmt(v['requestsPerSecond'])} | {fmt(v['p50Microseconds'])} | {fmt(v['p99Microseconds'])} | "
                  f"{fmt(v['cpuMicrosecondsPerRequest'], '{:,.1f}')} | "
                  f"{fmt(None if rss is None else rss / 1024, '{:,.1f}')} | {fmt(v['serverBusy'], '{:.2f}')} | "
                  f"{fmt(v['connections'])} |")
summary["failures"] = [r for r in rows if r.get("failed")]
if summary["failures"]:
    print("Failed runs:", ", ".join(f"{r['client']} HTTP/{r['protocol']} {r['mode']}" + (f" ({r['why']})" if r.get("why") else "")
                                    for r in summary["failures"]))
json.dump(summary, open(out_path, "w"), indent=2, sort_keys=True)
print(f"\nWrote {out_path}")
EOF
    exit 0
fi

missing=()
command -v nginx >/dev/null || missing+=(nginx-light)
command -v wrk >/dev/null || missing+=(wrk)
command -v pkg-config >/dev/null || missing+=(pkg-config)
pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
command -v openssl >/dev/null || missing+=(openssl)
((INSTRUCTIONS)) && ! command -v valgrind >/dev/null && missing+=(valgrind)
if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

# A path dependency's new files are only noticed when a manifest changes.
touch Package.swift Benchmarks/Package.swift
if ((INSTRUCTIONS || LOCKS)); then
    echo "Building serverapi-curl-count (release, Swift runtime linked statically)…" >&2
    COUNT_BUILD=(-c release --static-swift-stdlib --package-path Benchmarks --scratch-path Benchmarks/.build-static)
    swift build "${COUNT_BUILD[@]}" --product serverapi-curl-count >&2
    COUNT="$(swift build "${COUNT_BUILD[@]}" --show-bin-path)/serverapi-curl-count"
else
    echo "Building serverapi-transport-bench (release)…" >&2
    swift build -c release --package-path Benchmarks --product serverapi-transport-bench >&2
    ((SCALING_ONLY)) || swift build -c release --package-path Benchmarks --product serverapi-bench >&2
    BIN="$(swift build -c release --package-path Benchmarks --show-bin-path)"
    BENCH="$BIN/serverapi-transport-bench"
fi

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

# One nginx worker per core, each with room for c1000 (and wrk's c1000 beside a client's leftovers).
NGINX_WORKERS=$(nproc)
cat >"$WORK/nginx.conf" <<EOF
daemon off;
worker_processes $NGINX_WORKERS;
worker_rlimit_nofile $(ulimit -n);
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 8192; }
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

if ((LOCKS)); then
    # Lock acquisitions per request, counted by a preloaded library (Benchmarks/reference/lock_count.c) that the
    # locks' ThreadSanitizer hooks call: 1,000 and then 3,000 requests, the difference divided by 2,000, in total,
    # taken while another lock was held (nested), and by the function that took them.
    cc -shared -fPIC -O2 -o "$WORK/lock_count.so" Benchmarks/reference/lock_count.c -ldl
    locks() {
        SAPI_LOCK_REPORT="$WORK/locks-$1.txt" LD_PRELOAD="$WORK/lock_count.so" "${@:2}" >"$WORK/run.json"
    }
    for level in 1 64; do
        for client in curl curl-manager; do
            flag=()
            [[ $client == curl-manager ]] && flag=(--manager)
            locks first "$COUNT" "${flag[@]}" --url "$SMALL" --concurrency "$level" --requests 1000
            locks second "$COUNT" "${flag[@]}" --url "$SMALL" --concurrency "$level" --requests 3000
            python3 - "$WORK/locks-first.txt" "$WORK/locks-second.txt" "$client" "c$level" <<'PYEOF'
import collections, subprocess, sys
def read(path):
    total, sites = None, collections.Counter()
    for line in open(path):
        parts = line.split()
        if parts[0] == "total":
            total = (int(parts[1]), int(parts[2]))
        else:
            sites[(parts[2], parts[3])] += int(parts[1])
    return total, sites
(first, first_sites), (second, second_sites) = read(sys.argv[1]), read(sys.argv[2])
per = lambda a, b: (b - a) / 2000
print(f"{sys.argv[3]:<14} {sys.argv[4]:>4}  {per(first[0], second[0]):6.2f} locks/request, {per(first[1], second[1]):5.2f} nested")
by_function = collections.Counter()
for (binary, offset), count in second_sites.items():
    share = per(first_sites.get((binary, offset), 0), count)
    if share < 0.05:
        continue
    name = "?"
    if binary != "?":
        # The inlined frames, innermost first (every other line is a file and line): the first that is not the lock
        # itself names who took it.
        out = subprocess.run(["addr2line", "-f", "-i", "-e", binary, offset], capture_output=True, text=True).stdout
        for mangled in out.splitlines()[::2]:
            demangled = subprocess.run(
                ["swift", "demangle", "--simplified", "--compact", mangled], capture_output=True, text=True
            ).stdout.strip()
            name = demangled or mangled
            if not any(part in name for part in ("withLock", "Mutex", "locked(", "closure #1 in Locked")):
                break
    by_function[name[:120]] += share
for name, share in by_function.most_common():
    print(f"    {share:5.2f}  {name}")
PYEOF
        done
    done
    exit 0
fi

if ((INSTRUCTIONS)); then
    # Total instructions of one run under callgrind (every thread, start to exit).
    instructions() {
        valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.out" "$@" >"$WORK/run.json" 2>"$WORK/valgrind.log" \
            || { cat "$WORK/valgrind.log" >&2; exit 1; }
        callgrind_annotate "$WORK/callgrind.out" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
    }
    requests() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["requests"])' "$WORK/run.json"; }
    printf '%-16s %6s %12s\n' client level instr/req
    for level in 1 64; do
        # The C loop runs for a time, without its warm-up (every request counted): 2 s, then 6 s (under callgrind,
        # some thousands of requests).
        first=$(CURL_MULTI_LOOP_WARMUP=0 instructions "$WORK/curl_multi_loop" "$SMALL" "$level" 2)
        first_requests=$(requests)
        second=$(CURL_MULTI_LOOP_WARMUP=0 instructions "$WORK/curl_multi_loop" "$SMALL" "$level" 6)
        second_requests=$(requests)
        reference=$(((second - first) / (second_requests - first_requests)))
        printf '%-16s %6s %12d\n' libcurl-c "c$level" "$reference"
        for client in curl curl-manager; do
            flag=()
            [[ $client == curl-manager ]] && flag=(--manager)
            first=$(instructions "$COUNT" "${flag[@]}" --url "$SMALL" --concurrency "$level" --requests 1000)
            second=$(instructions "$COUNT" "${flag[@]}" --url "$SMALL" --concurrency "$level" --requests 3000)
            per=$(((second - first) / 2000))
            printf '%-16s %6s %12d   %s× the C loop\n' "$client" "c$level" "$per" \
                "$(python3 -c "print(f'{$per / $reference:.2f}')")"
        done
    done
    echo "goal (issue 50): the bare CurlTransport within 1.3× the C loop's instructions per request at c64"
    exit 0
fi

echo "nginx on 127.0.0.1:$PORT ($NGINX_WORKERS workers); $RUNS run(s) per row, ${DURATION}s each, ${DOWNLOAD_MB} MB download" >&2
CLASSIC_RUNS=$RUNS
((SCALING_ONLY)) && CLASSIC_RUNS=0
for run in $(seq "$CLASSIC_RUNS"); do
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
if ((SCALING_ONLY)); then
    echo '{}' >"$WORK/bench-core.json"
else
    echo "  manager overhead with MockTransport" >&2
    "$BIN/serverapi-bench" --only overhead --repetitions $((RUNS == 1 ? 5 : 15)) --output "$WORK/bench-core.json" >&2
fi

# The concurrency table (issue 26): every client at c1, c64, c256 and c1000, each run its own process.
SCALING="$WORK/scaling.jsonl"
: >"$SCALING"
mode_of() { [[ $1 == 1 ]] && echo seq || echo "c$1"; }
# The C loop prints its own client name: `relabel NAME` renames its JSON line.
relabel() { python3 -c 'import json, sys; row = json.loads(sys.stdin.read()); row["client"] = sys.argv[1]; print(json.dumps(row))' "$1"; }
LIBRARIES="system"
if ((BACKPORTS)); then
    BACKPORTS_DIR=$(scripts/libcurl-backports.sh)
    LIBRARIES="system backports"
fi
LOOPS_DEFAULT=$(nproc)
for run in $(seq "$RUNS"); do
    for level in $LEVELS; do
        mode=$(mode_of "$level")
        for library in $LIBRARIES; do
        for client in $SCALING_CLIENTS; do
            suffix=""
            if [[ $library == backports ]]; then
                # Only what links libcurl runs again.
                [[ $client == libcurl-c* || $client == curl* ]] || continue
                suffix="@8.14"
                export LD_LIBRARY_PATH="$BACKPORTS_DIR"
            else
                unset LD_LIBRARY_PATH
            fi
            echo "  run $run: $client$suffix $mode" >&2
            # Each client's rows go to this file first, to be labelled with the library.
            ROWS="$WORK/rows.jsonl"
            : >"$ROWS"
            case "$client" in
            wrk)
                # wrk's own CPU time, from /usr/bin/time, over its whole run (no warm-up phase to leave out).
                out=$(/usr/bin/time -f 'TIME %U %S %M' wrk -t1 -c"$level" -d"${DURATION}s" --latency "$SMALL" 2>&1) || true
                WRK_OUT="$out" python3 - "$mode" >>"$ROWS" <<'PY' || echo "{\"client\":\"wrk\",\"mode\":\"$mode\",\"failed\":true}" >>"$ROWS"
import json, os, re, sys
out = os.environ["WRK_OUT"]
def micros(text):
    number, unit = re.match(r"([0-9.]+)(us|ms|s)", text).groups()
    return float(number) * {"us": 1, "ms": 1e3, "s": 1e6}[unit]
rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))
requests = int(re.search(r"([0-9]+) requests in", out).group(1))
p50 = micros(re.search(r"\s50%\s+(\S+)", out).group(1))
p99 = micros(re.search(r"\s99%\s+(\S+)", out).group(1))
user, system, rss = re.search(r"TIME ([0-9.]+) ([0-9.]+) ([0-9]+)", out).groups()
print(json.dumps({"client": "wrk", "mode": sys.argv[1], "requestsPerSecond": rps, "p50Microseconds": p50,
                  "p99Microseconds": p99, "cpuMicrosecondsPerRequest": (float(user) + float(system)) * 1e6 / requests,
                  "peakRSSKilobytes": int(rss)}))
PY
                ;;
            libcurl-c | libcurl-c-epoll | libcurl-c-loops)
                # libcurl-c-loops: perform + poll on as many threads (multi handles) as CurlTransport's default loops.
                loop=$([[ $client == libcurl-c-epoll ]] && echo socket || echo perform)
                threads=1
                [[ $client == libcurl-c-loops ]] && threads=$((level < LOOPS_DEFAULT ? level : LOOPS_DEFAULT))
                "$WORK/curl_multi_loop" "$SMALL" "$level" "$DURATION" "$loop" "$threads" | relabel "$client" >>"$ROWS" \
                    || echo "{\"client\":\"$client\",\"mode\":\"$mode\",\"failed\":true}" >>"$ROWS"
                ;;
            curl-rr | curl-manager-rr)
                # The default loops, taking one origin's calls in turn (LoopAssignment.roundRobin).
                SAPI_BENCH_LOOP_ASSIGNMENT=roundRobin "$BENCH" --client "${client%-rr}" --label "$client" --mode "$mode" \
                    --url "$SMALL" --duration "$DURATION" >>"$ROWS" \
                    || echo "{\"client\":\"$client\",\"mode\":\"$mode\",\"failed\":true}" >>"$ROWS"
                ;;
            curl-bo | curl-manager-bo)
                # The default loops, one origin's calls always on its loop (LoopAssignment.byOrigin).
                SAPI_BENCH_LOOP_ASSIGNMENT=byOrigin "$BENCH" --client "${client%-bo}" --label "$client" --mode "$mode" \
                    --url "$SMALL" --duration "$DURATION" >>"$ROWS" \
                    || echo "{\"client\":\"$client\",\"mode\":\"$mode\",\"failed\":true}" >>"$ROWS"
                ;;
            curl-1loop | curl-manager-1loop)
                "$BENCH" --client "${client%-1loop}" --loops 1 --label "$client" --mode "$mode" --url "$SMALL" \
                    --duration "$DURATION" >>"$ROWS" \
                    || echo "{\"client\":\"$client\",\"mode\":\"$mode\",\"failed\":true}" >>"$ROWS"
                ;;
            *)
                "$BENCH" --client "$client" --mode "$mode" --url "$SMALL" --duration "$DURATION" >>"$ROWS" \
                    || echo "{\"client\":\"$client\",\"mode\":\"$mode\",\"failed\":true}" >>"$ROWS"
                ;;
            esac
            while read -r line; do
                [[ -n $line ]] && printf '%s\n' "$line" | relabel "$client$suffix" >>"$SCALING"
            done <"$ROWS"
        done
        done
    done
done
unset LD_LIBRARY_PATH

mkdir -p Benchmarks/results
python3 - "$RAW" "$ROOT/Benchmarks/results/bench-transports.json" "$RUNS" "$DURATION" "$DOWNLOAD_MB" "$WORK/bench-core.json" "$SCALING" <<'EOF'
import json, statistics, sys
raw_path, out_path, runs, duration, download_mb = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
core = json.load(open(sys.argv[6]))
rows = [json.loads(line) for line in open(raw_path) if line.strip()]

def fmt(v, spec="{:,.0f}"):
    return "—" if v is None else spec.format(v)

def r(a, b):
    return None if a is None or b is None or b == 0 else a / b

def median_of(rows, client, mode, key):
    """The median of `key` over the rows of `client` in `mode` that did not fail; None when there are none."""
    values = [row[key] for row in rows
              if row["client"] == client and row["mode"] == mode and row.get(key) is not None and not row.get("failed")]
    return statistics.median(values) if values else None

def goal_recorder(goals, spec):
    """A function that records a goal's value from this run in `goals` and prints its table row; `spec` formats
    a value that is not a ratio (×)."""
    def goal(name, value, target, at_least=True, unit="×"):
        met = None if value is None else (value >= target if at_least else value <= target)
        goals.append({"goal": name, "value": value, "target": target, "atLeast": at_least, "met": met})
        shown = "—" if value is None else (f"{value:.2f}{unit}" if unit == "×" else f"{spec.format(value)} {unit}")
        target_shown = f"{target:g}{unit}" if unit == "×" else f"{target:g} {unit}"
        verdict = "—" if met is None else ("met" if met else "MISSED")
        print(f"| {name} | {shown} | {'≥' if at_least else '≤'} {target_shown} | {verdict} |")
    return goal

if rows:
    med = lambda client, mode, key: median_of(rows, client, mode, key)

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
    goal = goal_recorder(goals, "{:+.0f}")

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
else:
    summary = {"runs": runs, "durationSeconds": duration, "failures": []}
    goals, overhead_cpu = [], None
summary["goals"] = goals
summary["managerOverheadCPUMicroseconds"] = overhead_cpu
if summary["failures"]:
    print("Failed runs:", ", ".join(f"{r['client']} {r['mode']}" for r in summary["failures"]))
# The concurrency table and issue 26's goals, from the same run.
scaling_rows = [json.loads(line) for line in open(sys.argv[7]) if line.strip()]
smed = lambda client, mode, key: median_of(scaling_rows, client, mode, key)
levels = [m for m in ["seq", "c64", "c256", "c1000"] if any(r["mode"] == m for r in scaling_rows)]
scaling_clients = []
for row in scaling_rows:
    if row["client"] not in scaling_clients: scaling_clients.append(row["client"])
loops = next((r.get("loops") for r in scaling_rows if r["client"] == "curl" and r.get("loops")), None)
names = {"wrk": "wrk -t1", "libcurl-c": "C libcurl loop (perform + poll)", "libcurl-c-epoll": "C libcurl loop (socket + epoll)",
         "ahc": "async-http-client", "curl-1loop": "CurlTransport, bare, 1 loop",
         "curl": f"CurlTransport, bare, {loops or 'default'} loops", "curl-manager": f"manager + CurlTransport ({loops or 'default'} loops)",
         "curl-manager-1loop": "manager + CurlTransport, 1 loop",
         "curl-rr": f"CurlTransport, bare, {loops or 'default'} loops round-robin",
         "curl-manager-rr": f"manager + CurlTransport ({loops or 'default'} loops round-robin)",
         "curl-bo": f"CurlTransport, bare, {loops or 'default'} loops by origin",
         "curl-manager-bo": f"manager + CurlTransport ({loops or 'default'} loops by origin)",
         "libcurl-c-loops": f"C libcurl loop (perform + poll), {loops or 'default'} threads"}
for c in list(names):
    names[c + "@8.14"] = names[c] + ", libcurl 8.14"
summary["scaling"] = {c: {m: {k: smed(c, m, k) for k in ["requestsPerSecond", "p50Microseconds", "p99Microseconds",
                                                         "cpuMicrosecondsPerRequest", "peakRSSKilobytes"]}
                          for m in levels} for c in scaling_clients}
summary["scalingFailures"] = [r for r in scaling_rows if r.get("failed")]
if scaling_rows:
    shown = {"seq": "c1"}
    print()
    print(f"Concurrency: 1 KB JSON from nginx on loopback, median of {runs} run(s), {duration:g} s each after 1 s of warm-up; "
          "CPU = the client process's user + system time per request")
    print()
    print("| client | calls at once | req/s | p50 µs | p99 µs | CPU µs/req | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c in scaling_clients:
        for m in levels:
            v = lambda k: smed(c, m, k)
            rss = v("peakRSSKilobytes")
            print(f"| {names.get(c, c)} | {shown.get(m, m)[1:]} | {fmt(v('requestsPerSecond'))} | {fmt(v('p50Microseconds'))} | "
                  f"{fmt(v('p99Microseconds'))} | {fmt(v('cpuMicrosecondsPerRequest'), '{:,.1f}')} | "
                  f"{fmt(None if rss is None else rss / 1024, '{:,.1f}')} |")

    srps = lambda c, m: smed(c, m, "requestsPerSecond")
    scpu = lambda c, m: smed(c, m, "cpuMicrosecondsPerRequest")
    srss = lambda c, m: smed(c, m, "peakRSSKilobytes")
    goals26 = []
    goal26 = goal_recorder(goals26, "{:,.1f}")
    print()
    print("Issue 26's goals, from this run:")
    print()
    print("| goal | this run | target | |")
    print("|---|---:|---:|---|")
    for m in levels:
        goal26(f"manager + CurlTransport ÷ async-http-client, {shown.get(m, m)}", r(srps("curl-manager", m), srps("ahc", m)), 1.5)
    for m in ["c64", "c1000"]:
        if m in levels: goal26(f"manager + CurlTransport ÷ wrk, {m}", r(srps("curl-manager", m), srps("wrk", m)), 0.6)
    if "c64" in levels and "c1000" in levels:
        goal26("manager CPU/request, c1000 ÷ c64", r(scpu("curl-manager", "c1000"), scpu("curl-manager", "c64")), 1.25, at_least=False)
        goal26("bare CurlTransport CPU/request, c1000 ÷ c64", r(scpu("curl", "c1000"), scpu("curl", "c64")), 1.25, at_least=False)
    if "c1000" in levels:
        goal26("manager peak RSS ÷ async-http-client's, c1000", r(srss("curl-manager", "c1000"), srss("ahc", "c1000")), 1.0, at_least=False)
        manager_rss, bare_rss = srss("curl-manager", "c1000"), srss("curl", "c1000")
        per_call = None if manager_rss is None or bare_rss is None else (manager_rss - bare_rss) / 1000
        goal26("manager memory per call in flight (peak RSS over the bare transport's ÷ 1000), c1000", per_call, 16,
               at_least=False, unit="KB")
    for m in ["c64", "c1000"]:
        if m in levels:
            goal26(f"bare CurlTransport, {loops or 'default'} loops ÷ 1 loop, {m}", r(srps("curl", m), srps("curl-1loop", m)), 1.0)
            goal26(f"bare CurlTransport, {loops or 'default'} loops round-robin ÷ 1 loop, {m}", r(srps("curl-rr", m), srps("curl-1loop", m)), 1.0)
            goal26(f"manager + CurlTransport, {loops or 'default'} loops, adaptive (default) ÷ by origin, {m}", r(srps("curl-manager", m), srps("curl-manager-bo", m)), 1.0)
            goal26(f"manager + CurlTransport, {loops or 'default'} loops, adaptive (default) ÷ round-robin, {m}", r(srps("curl-manager", m), srps("curl-manager-rr", m)), 1.0)
            goal26(f"bare CurlTransport ÷ C libcurl loop (socket + epoll), {m}", r(srps("curl", m), srps("libcurl-c-epoll", m)), 0.85)
    # Issue 38's goals: on each library, the manager against async-http-client and the C loop (same libcurl, same
    # loops), the bare transport against the C loop (1 loop each), and 8.14 against 7.88.
    goals38 = []
    goal38 = goal_recorder(goals38, "{:,.2f}")
    print()
    print("Issue 38's goals, from this run:")
    print()
    print("| goal | this run | target | |")
    print("|---|---:|---:|---|")
    for lib, at in [("system libcurl", ""), ("libcurl 8.14", "@8.14")]:
        if at and not any(row["client"].endswith(at) for row in scaling_rows): continue
        for m, target in [("seq", 1.5), ("c64", 1.5), ("c1000", 1.2)]:
            if m in levels:
                goal38(f"{lib}: manager ÷ async-http-client, {shown.get(m, m)}", r(srps("curl-manager" + at, m), srps("ahc", m)), target)
        for m in ["c64", "c1000"]:
            if m in levels:
                goal38(f"{lib}: manager ÷ C loop with as many threads, {m}", r(srps("curl-manager" + at, m), srps("libcurl-c-loops" + at, m)), 0.8)
                goal38(f"{lib}: bare transport, 1 loop ÷ C loop, {m}", r(srps("curl-1loop" + at, m), srps("libcurl-c" + at, m)), 0.85)
        if "c1000" in levels:
            goal38(f"{lib}: manager peak RSS ÷ async-http-client's, c1000", r(srss("curl-manager" + at, "c1000"), srss("ahc", "c1000")), 1.0, at_least=False)
    for m in ["c64", "c1000"]:
        if m in levels:
            for c in ["libcurl-c", "libcurl-c-loops", "curl-manager"]:
                goal38(f"8.14 ÷ 7.88, {names.get(c, c)}, {m}", r(srps(c + "@8.14", m), srps(c, m)), 0.95)
    summary["issue38Goals"] = goals38
    # What more cores would give, when the client's CPU per request is what limits it.
    for c in ["curl-manager", "curl", "ahc"]:
        for m in ["c64", "c1000"]:
            cpu = scpu(c, m)
            if cpu:
                print(f"  {names.get(c, c)} at {m}: {cpu:,.1f} µs CPU/request → at most {16e6 / cpu:,.0f} req/s on 16 cores "
                      f"({1e6 / cpu:,.0f} per core), if the server keeps up")
    summary["scalingGoals"] = goals26
    if summary["scalingFailures"]:
        print("Failed concurrency runs:", ", ".join(f"{r['client']} {r['mode']}" for r in summary["scalingFailures"]))
json.dump(summary, open(out_path, "w"), indent=2, sort_keys=True)
print(f"\nWrote {out_path}")
EOF
