#!/usr/bin/env bash
# Compares ServerAPIKit's WebSockets (ServerAPIManager over CurlTransport) with vapor/websocket-kit 2.16.2 (SwiftNIO)
# as clients of one SwiftNIO WebSocket server on loopback (serverapi-websocket-bench serve, a process of its own).
# Usage: scripts/bench-websocket.sh [--quick] [--runs N] [--modes "echo sink source"] [--sizes "64 4096 1048576"]
#                                   [--levels "1 100"] [--idle "10000"]
#        scripts/bench-websocket.sh --profile MODE SIZE CONNECTIONS [SECONDS] [--client serverapikit|websocket-kit]
#        (--modes also takes echo-json and source-json: the compressed rows)
#   full run: 1 run per row (--runs N: the median of N), 5 s per row after 1 s of warm-up.
#   --quick:  2 s per row after 0.5 s of warm-up.
# Compressed rows (modes echo-json and source-json): a JSON payload (records like an API's list) on routes where
# the server accepts permessage-deflate with no context takeover; ServerAPIKit offers it (its default) and sends and
# receives compressed messages, websocket-kit offers none. The table says how many bytes a message is compressed.
#   --idle:   the connection counts of the idle rows (default 10000; "" for none): each client opens that many
#             connections, lets them sit for the row's time, and reports resident memory per connection (over the
#             memory before opening) and its threads; then closes them. The medians of --runs.
#   --profile: `perf record -g` of one client (ServerAPIKit's unless --client says) on one row, 5 s unless SECONDS
#              (installs linux-perf when missing); prints the top of `perf report --no-children` and every sample's
#              call chain sorted by thread, by what the CPU did (syscalls, lock contention, waking and parking
#              threads, runtimes, the library's code) and on whose behalf (the core's WebSocket, inbox and codec,
#              the curl backend's session and driver, libcurl), in shares and in µs per message. The recording
#              stays in Benchmarks/results/websocket-CLIENT-MODE-SIZE-N.perf.
# Rows: echo (send one message, await its echo, repeat: round trips/s), sink (client → server: messages sent one
# after the other, each awaited, counted by the server) and source (server → client: as fast as the socket takes
# them, counted by the client), for 64 B, 4 KiB and 1 MiB binary messages, on 1 connection and on 100 at once.
# Each row runs both clients, each in a process of its own, one right after the other, the first of the two
# alternating from row to row so that the machine's noise hits both. Every count is checked: a run that lost,
# added or damaged a message fails (and so does one stuck for a minute past its time), it gives no number.
# Reported: messages/s, the client process's CPU µs per message (getrusage user + system over the measured seconds),
# its peak RSS, its RSS per connection at 100 connections, the server's CPU µs per message, and ServerAPIKit ÷
# websocket-kit per row. The ServerAPIKit client runs on bookworm-backports' libcurl 8.14
# (scripts/libcurl-backports.sh), as CI's WebSocket runs do; both clients run with the same LD_LIBRARY_PATH. Prints a table; writes
# Benchmarks/results/bench-websocket.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

RUNS=1
DURATION=5
WARMUP=1
MODES="echo sink source"
SIZES="64 4096 1048576"
LEVELS="1 100"
IDLE="10000"
PROFILE=()
PROFILE_CLIENT=serverapikit
usage() {
    echo "usage: $0 [--quick] [--runs N] [--modes \"echo sink source\"] [--sizes \"64 4096 1048576\"] [--levels \"1 100\"]" >&2
    echo "       $0 --profile MODE SIZE CONNECTIONS [SECONDS] [--client serverapikit|websocket-kit]" >&2
    exit 1
}
while (($#)); do
    case "$1" in
    --quick) DURATION=2; WARMUP=0.5 ;;
    --runs) RUNS="$2"; shift ;;
    --modes) MODES="$2"; shift ;;
    --sizes) SIZES="$2"; shift ;;
    --levels) LEVELS="$2"; shift ;;
    --idle) IDLE="$2"; shift ;;
    --client) PROFILE_CLIENT="$2"; shift ;;
    --profile)
        (($# >= 4)) || usage
        PROFILE=("$2" "$3" "$4")
        shift 3
        if [[ ${2:-} =~ ^[0-9]+$ ]]; then DURATION="$2"; shift; fi
        ;;
    *) usage ;;
    esac
    shift
done
# 100 connections need a descriptor each on both sides, and more.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

missing=()
command -v pkg-config >/dev/null || missing+=(pkg-config)
pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
if ((${#PROFILE[@]})) && ! command -v perf >/dev/null; then missing+=(linux-perf); fi
if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

echo "Building serverapi-websocket-bench (release)…" >&2
# A path dependency's new files are only noticed when a manifest changes.
touch Package.swift Benchmarks/Package.swift
swift build -c release --package-path Benchmarks --product serverapi-websocket-bench >&2
BIN="$(swift build -c release --package-path Benchmarks --show-bin-path)"
BENCH="$BIN/serverapi-websocket-bench"
# libcurl 8.14 for ServerAPIKit's client (7.88 works too; 8.14 is the one the figures are compared on).
LIBCURL_DIR=$(scripts/libcurl-backports.sh)
export LD_LIBRARY_PATH="$LIBCURL_DIR"

WORK=$(mktemp -d /tmp/bench-websocket.XXXXXX)
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$BENCH" serve --port 0 >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 100); do
    grep -q '^port ' "$WORK/server.out" 2>/dev/null && break
    sleep 0.1
done
PORT=$(awk '/^port / {print $2}' "$WORK/server.out")
[[ -n "$PORT" ]] || { echo "the server did not start:" >&2; cat "$WORK/server.err" >&2; exit 1; }
echo "server on 127.0.0.1:$PORT (pid $SERVER_PID, $(nproc) event loops); libcurl for ServerAPIKit from $LIBCURL_DIR" >&2

# The server's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat).
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
# The machine's busy and total CPU time so far, in clock ticks (/proc/stat), to tell how much other processes took.
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }

if ((${#PROFILE[@]})); then
    mode=${PROFILE[0]} size=${PROFILE[1]} connections=${PROFILE[2]}
    mkdir -p Benchmarks/results
    DATA="$ROOT/Benchmarks/results/websocket-$PROFILE_CLIENT-$mode-$size-$connections.perf"
    echo "perf record -g: $PROFILE_CLIENT, $mode, $size B, $connections connection(s), ${DURATION} s" >&2
    result=$(perf record -g -o "$DATA" -- "$BENCH" --client "$PROFILE_CLIENT" --mode "$mode" --size "$size" \
        --connections "$connections" --port "$PORT" --duration "$DURATION" --warmup "$WARMUP")
    echo "$result"
    echo
    echo "Top of perf report --no-children (self time, by symbol):"
    # `head` closes the pipe early: under pipefail that is not the script's failure.
    perf report -i "$DATA" --no-children --stdio -g none --sort comm,dso,sym --percent-limit 0.5 2>/dev/null \
        | grep -v '^#' | grep -v '^$' | cut -c1-200 | head -40 || true
    cpu=$(printf '%s' "$result" | python3 -c 'import json, sys; print(json.load(sys.stdin)["cpuMicrosecondsPerMessage"])')
    # Every sample's call chain, sorted into what the CPU did and on whose behalf (the library's parts).
    python3 - "$DATA" "$cpu" <<'PY'
import collections, re, subprocess, sys
data, cpu_per_message = sys.argv[1], float(sys.argv[2])
out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym,dso"], capture_output=True, text=True).stdout
samples = []
for block in out.split("\n\n"):
    lines = [l for l in block.split("\n") if l.strip()]
    if not lines: continue
    comm = lines[0].strip()
    frames = []
    for l in lines[1:]:
        m = re.match(r"\s*([0-9a-f]+) (.*) \((.*)\)$", l)
        if m: frames.append((m.group(2), m.group(3)))
    samples.append((comm, frames))
total = len(samples)
KINDS = [
    ("lock contention (Mutex slow path: spin, futex_lock_pi)", lambda s, d: "_lockSlow" in s or "_unlockSlow" in s),
    ("send(2): the frame's bytes into the socket (kernel TCP; on loopback also the server's receive path)", lambda s, d: s in ("__send", "send", "__libc_send", "sendto", "__sendto")),
    ("recv(2)", lambda s, d: s in ("__recv", "recv", "__libc_recv", "recvfrom", "__recvfrom")),
    ("poll(2) in curl_multi_poll (sleeping and waking the curl thread)", lambda s, d: s in ("__poll", "poll", "ppoll", "__ppoll")),
    ("read(2), write(2): curl's wake-up socket (curl_multi_wakeup); NIO's connection", lambda s, d: s in ("__write", "write", "__libc_write", "__GI___libc_write", "__read", "read", "__libc_read", "eventfd_write")),
    ("writev(2): NIO's connection", lambda s, d: s in ("writev", "__writev", "__GI___writev")),
    ("epoll_wait(2): NIO's event loop (sleeping and waking)", lambda s, d: "epoll_wait" in s),
    ("waking a pool thread (sem_post: futex wake)", lambda s, d: "sem_post" in s or "_dispatch_semaphore_signal" in s),
    ("a pool thread parking (futex wait)", lambda s, d: "__futex_abstimed_wait" in s or "sem_wait" in s or "sem_timedwait" in s),
    ("allocation (malloc, free)", lambda s, d: s in ("malloc", "free", "cfree", "realloc", "calloc") or s.startswith("_int_") or s.startswith("malloc_") or "unlink_chunk" in s or "cfree@" in s),
    ("memcpy/memmove", lambda s, d: "memmove" in s or "memcpy" in s or "memset" in s),
    ("Swift concurrency runtime (tasks, continuations, executors)", lambda s, d: "libswift_Concurrency" in d or "libdispatch" in d),
    ("Swift runtime (retain/release, exclusivity, generics)", lambda s, d: "libswiftCore" in d or "libswiftSynchronization" in d or "libFoundation" in d),
    ("libcurl's own code", lambda s, d: "libcurl" in d),
    ("the library's own code (core and backend)", lambda s, d: "serverapi-websocket-bench" in d and ("ServerAPIKit" in s or "ServerAPICurl" in s or "curlWebSocket" in s)),
    ("SwiftNIO and websocket-kit code", lambda s, d: "serverapi-websocket-bench" in d and ("NIO" in s or "WebSocketKit" in s)),
    ("benchmark harness", lambda s, d: "serverapi-websocket-bench" in d),
]
COMPONENTS = [
    ("core: WebSocketFrameCodec.encode (header, mask, copy)", "WebSocketFrameCodecV6encode"),
    ("core: WebSocketFrameCodec.decode (buffer, copies)", "WebSocketFrameCodecV"),
    ("core: WebSocketMessageAssembler", "WebSocketMessageAssembler"),
    ("core: WebSocketInbox (push, next)", "WebSocketInbox"),
    ("core: WebSocket (read loop, send)", "ServerAPIKit9WebSocketC"),
    ("curl backend: CurlWebSocket.Wire (the loop's reads and writes)", "CurlWebSocketC4Wire"),
    ("curl backend: CurlWebSocket (send, receive, deliver: locks, queues, continuations)", "CurlWebSocket"),
    ("curl backend: the loop (CurlLoopRunner)", "CurlLoopRunner"),
    ("benchmark harness", "serverapi_websocket_bench"),
]
def kind(frames):
    user = [(s, d) for s, d in frames if not d.startswith("[kernel") and not (s in ("[unknown]", "") and "libcurl" not in d)]
    if user and user[0][0] == "syscall":
        # A futex call of the library's lock helper (futex_lock_pi), or of something else.
        caller = user[1][0] if len(user) > 1 else ""
        if "Mutex" in caller or "withLock" in caller or "_lockSlow" in caller or "Locked" in caller:
            return KINDS[0][0]
        user = user[1:]
    for sym, dso in user:
        for name, test in KINDS:
            if test(sym, dso): return name
        return "other user code: " + sym[:60]
    return "kernel only (interrupts, scheduling; the chain has no user frame)"
def component(comm, frames):
    for sym, dso in frames:
        for name, pattern in COMPONENTS:
            if pattern in sym: return name
    if comm.startswith("ServerAPI.curl"):
        return "curl thread, inside libcurl (its sends, polls and wake-ups; libcurl has no frame pointers, so no caller)"
    if "qos" in comm: return "concurrency pool, between tasks (parking, waking)"
    return "other"
threads = collections.Counter(c for c, _ in samples)
kinds = collections.Counter(kind(f) for _, f in samples)
comps = collections.Counter(component(c, f) for c, f in samples)
def table(title, counter):
    print(f"\n| {title} | share of the client's CPU | µs per message |")
    print("|---|---:|---:|")
    for name, n in counter.most_common():
        if n / total < 0.005: continue
        print(f"| {name} | {100 * n / total:.1f} % | {cpu_per_message * n / total:.2f} |")
print(f"{total} samples; {cpu_per_message:.2f} µs of CPU per message")
named = collections.Counter()
for c, n in threads.items():
    named["the connection's curl thread" if c.startswith("ServerAPI.curl") else "Swift's concurrency pool" if "qos" in c else "main thread" if c.startswith("serverapi") else c] += n
table("thread", named)
table("what the CPU did (innermost frame outside the kernel)", kinds)
table("on behalf of (innermost frame of the library's WebSocket code)", comps)
PY
    echo "Wrote $DATA (perf report -i $DATA --no-children)" >&2
    exit 0
fi

RAW="$WORK/raw.jsonl"
: >"$RAW"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
row=0
for run in $(seq "$RUNS"); do
    for mode in $MODES; do
        for size in $SIZES; do
            for connections in $LEVELS; do
                clients="serverapikit websocket-kit"
                ((row % 2)) && clients="websocket-kit serverapikit"
                row=$((row + 1))
                for client in $clients; do
                    echo "  run $run: $client $mode ${size} B × $connections" >&2
                    ticks=$(server_ticks)
                    read -r busy total <<<"$(machine_ticks)"
                    if out=$("$BENCH" --client "$client" --mode "$mode" --size "$size" --connections "$connections" \
                        --port "$PORT" --duration "$DURATION" --warmup "$WARMUP" 2>"$WORK/client.err"); then
                        server=$(($(server_ticks) - ticks))
                        read -r busy_after total_after <<<"$(machine_ticks)"
                        printf '%s\n' "$out" | python3 -c '
import json, sys
row = json.loads(sys.stdin.read())
run, server, busy, total, hz = (int(v) for v in sys.argv[1:6])
row["run"] = run; row["serverTicks"] = server
# What the other processes took of the machine while this client ran: busy time less the client and the server.
row["othersShare"] = max(0.0, (busy - server - row["processCPUSeconds"] * hz) / total) if total else None
print(json.dumps(row))' "$run" "$server" "$((busy_after - busy))" "$((total_after - total))" "$(getconf CLK_TCK)" >>"$RAW"
                    else
                        error=$(tail -1 "$WORK/client.err")
                        echo "    failed: $error" >&2
                        python3 -c '
import json, sys
print(json.dumps({"client": sys.argv[1], "mode": sys.argv[2], "size": int(sys.argv[3]), "connections": int(sys.argv[4]),
                  "run": int(sys.argv[5]), "failed": True, "error": sys.argv[6]}))' \
                            "$client" "$mode" "$size" "$connections" "$run" "$error" >>"$RAW"
                    fi
                done
            done
        done
    done
done
# Idle rows: memory and threads with many connections open and nothing sent.
IDLE_RAW="$WORK/idle.jsonl"
: >"$IDLE_RAW"
# Each side of ten thousand connections is a descriptor in each process.
ulimit -n 65536 2>/dev/null || true
for run in $(seq "$RUNS"); do
    for connections in $IDLE; do
        for client in serverapikit websocket-kit; do
            echo "  run $run: $client idle × $connections" >&2
            if out=$("$BENCH" --client "$client" --mode idle --size 64 --connections "$connections" \
                --port "$PORT" --duration "$DURATION" --warmup "$WARMUP" 2>"$WORK/client.err"); then
                printf '%s\n' "$out" >>"$IDLE_RAW"
            else
                echo "    failed: $(tail -1 "$WORK/client.err")" >&2
                printf '{"client": "%s", "connections": %s, "failed": true}\n' "$client" "$connections" >>"$IDLE_RAW"
            fi
        done
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
kill -0 "$SERVER_PID" 2>/dev/null || { echo "the server died:" >&2; cat "$WORK/server.err" >&2; exit 1; }

mkdir -p Benchmarks/results
python3 - "$RAW" "$ROOT/Benchmarks/results/bench-websocket.json" "$RUNS" "$DURATION" "$WARMUP" "$LOAD_BEFORE" \
    "$LOAD_AFTER" "$(getconf CLK_TCK)" <<'EOF'
import json, os, statistics, sys
raw_path, out_path, runs, duration, warmup, load_before, load_after, ticks_per_second = sys.argv[1:9]
rows = [json.loads(line) for line in open(raw_path) if line.strip()]
ticks_per_second = int(ticks_per_second)
for row in rows:
    if not row.get("failed"):
        row["serverCPUMicrosecondsPerMessage"] = row["serverTicks"] / ticks_per_second * 1e6 / row["messages"]
clients = ["serverapikit", "websocket-kit"]
names = {"serverapikit": "ServerAPIKit", "websocket-kit": "websocket-kit"}
keys = []
for row in rows:
    key = (row["mode"], row["size"], row["connections"])
    if key not in keys: keys.append(key)

def median(client, key, field):
    values = [r[field] for r in rows if not r.get("failed") and r["client"] == client
              and (r["mode"], r["size"], r["connections"]) == key and r.get(field) is not None]
    return statistics.median(values) if values else None
def failed(client, key):
    return any(r.get("failed") and r["client"] == client and (r["mode"], r["size"], r["connections"]) == key for r in rows)
def fmt(value, pattern="{:,.0f}"):
    return "—" if value is None else pattern.format(value)
def size_name(size):
    return f"{size // 1048576} MiB" if size >= 1048576 and size % 1048576 == 0 else (
        f"{size // 1024} KiB" if size >= 1024 and size % 1024 == 0 else f"{size} B")
def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

what = {"echo": "echo round trips", "sink": "client → server", "source": "server → client",
        "echo-json": "echo, JSON (SAK compressed)", "source-json": "server → client, JSON (SAK compressed)"}
shares = [r["othersShare"] for r in rows if r.get("othersShare") is not None]
noise = (f"other processes took {100 * statistics.mean(shares):.0f} % of the machine's CPU on average while the clients "
         f"ran (at most {100 * max(shares):.0f} %)") if shares else ""
summary = {"runs": int(runs), "durationSeconds": float(duration), "warmUpSeconds": float(warmup),
           "loadBefore": load_before, "loadAfter": load_after, "rows": [], "raw": rows}
print()
print(f"WebSockets on loopback: {duration} s per row after {warmup} s of warm-up, median of {runs} run(s); "
      f"load average {load_before} before, {load_after} after; libcurl "
      f"{next((r['libcurl'] for r in rows if r.get('libcurl')), '?')} for ServerAPIKit")
if noise: print(noise[0].upper() + noise[1:] + f" ({os.cpu_count()} cores)")
print("msg/s: round trips/s for echo; CPU: the client process's user + system µs per message; "
      "RSS: the client's peak; server: the server's CPU µs per message")
summary["othersShareMean"] = statistics.mean(shares) if shares else None
summary["othersShareMax"] = max(shares) if shares else None
print()
print("| row | size | conns | ServerAPIKit msg/s | websocket-kit msg/s | ratio | CPU µs/msg SAK | CPU µs/msg WSK "
      "| peak RSS MB SAK | peak RSS MB WSK | server µs/msg SAK | server µs/msg WSK |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for key in keys:
    mode, size, connections = key
    m = {c: {f: median(c, key, f) for f in ["messagesPerSecond", "cpuMicrosecondsPerMessage", "peakRSSKilobytes",
                                             "serverCPUMicrosecondsPerMessage", "rssOpenKilobytes",
                                             "rssBeforeOpenKilobytes"]} for c in clients}
    rate = lambda c: "failed" if m[c]["messagesPerSecond"] is None and failed(c, key) else fmt(m[c]["messagesPerSecond"])
    r = ratio(m["serverapikit"]["messagesPerSecond"], m["websocket-kit"]["messagesPerSecond"])
    cpu_digits = "{:,.1f}"
    print(f"| {what[mode]} | {size_name(size)} | {connections} | {rate('serverapikit')} | {rate('websocket-kit')} | "
          f"{fmt(r, '{:.2f}×')} | {fmt(m['serverapikit']['cpuMicrosecondsPerMessage'], cpu_digits)} | "
          f"{fmt(m['websocket-kit']['cpuMicrosecondsPerMessage'], cpu_digits)} | "
          f"{fmt(None if m['serverapikit']['peakRSSKilobytes'] is None else m['serverapikit']['peakRSSKilobytes'] / 1024, '{:,.1f}')} | "
          f"{fmt(None if m['websocket-kit']['peakRSSKilobytes'] is None else m['websocket-kit']['peakRSSKilobytes'] / 1024, '{:,.1f}')} | "
          f"{fmt(m['serverapikit']['serverCPUMicrosecondsPerMessage'], cpu_digits)} | "
          f"{fmt(m['websocket-kit']['serverCPUMicrosecondsPerMessage'], cpu_digits)} |")
    summary["rows"].append({"mode": mode, "size": size, "connections": connections, "ratio": r,
                            **{names[c]: m[c] for c in clients}})

# Memory per connection at the largest level: idle (resident memory just after opening them, over the memory before,
# per connection) and at work (peak RSS over the peak with 1 connection in the same row, per extra connection).
levels = sorted({k[2] for k in keys})
if len(levels) > 1:
    low, high = levels[0], levels[-1]
    print()
    print(f"Memory per connection at {high} connections (KB): idle = RSS right after opening them, over the RSS "
          f"before, ÷ {high}; at work = peak RSS over the same row's peak at {low}, ÷ {high - low}")
    print()
    print("| row | size | idle SAK | idle WSK | at work SAK | at work WSK |")
    print("|---|---:|---:|---:|---:|---:|")
    memory = []
    for mode, size, connections in keys:
        if connections != high: continue
        values = {}
        for c in clients:
            opened, before = median(c, (mode, size, high), "rssOpenKilobytes"), median(c, (mode, size, high), "rssBeforeOpenKilobytes")
            peak_high, peak_low = median(c, (mode, size, high), "peakRSSKilobytes"), median(c, (mode, size, low), "peakRSSKilobytes")
            values[c] = (None if opened is None or before is None else (opened - before) / high,
                         None if peak_high is None or peak_low is None else (peak_high - peak_low) / (high - low))
        print(f"| {what[mode]} | {size_name(size)} | {fmt(values['serverapikit'][0])} | {fmt(values['websocket-kit'][0])} | "
              f"{fmt(values['serverapikit'][1])} | {fmt(values['websocket-kit'][1])} |")
        memory.append({"mode": mode, "size": size, **{names[c]: {"idleKilobytesPerConnection": values[c][0],
                                                                 "workingKilobytesPerConnection": values[c][1]} for c in clients}})
    summary["memoryPerConnection"] = memory

# The goal: ServerAPIKit at least 1.5× websocket-kit on small messages (64 B and 4 KiB), every row.
small = [row for row in summary["rows"] if row["size"] <= 4096 and not row["mode"].endswith("-json")]
if small:
    print()
    print("Goal: ServerAPIKit ≥ 1.5× websocket-kit's messages/s on small messages (64 B, 4 KiB):")
    met = [row for row in small if row["ratio"] is not None and row["ratio"] >= 1.5]
    worst = min((row for row in small if row["ratio"] is not None), key=lambda row: row["ratio"], default=None)
    print(f"  {len(met)} of {len(small)} rows meet it" + (
        f"; the lowest: {worst['ratio']:.2f}× ({what[worst['mode']]}, {size_name(worst['size'])}, "
        f"{worst['connections']} conn.)" if worst else ""))
    # CPU per message moves less with the machine's noise than messages/s does.
    cpu = [row["ServerAPIKit"]["cpuMicrosecondsPerMessage"] / row["websocket-kit"]["cpuMicrosecondsPerMessage"]
           for row in small if row["ServerAPIKit"]["cpuMicrosecondsPerMessage"] and row["websocket-kit"]["cpuMicrosecondsPerMessage"]]
    if cpu:
        print(f"  CPU per message, ServerAPIKit ÷ websocket-kit, on the same rows: {min(cpu):.2f}× to {max(cpu):.2f}× "
              f"(median {statistics.median(cpu):.2f}×)")
        summary["smallMessagesCPURatioMedian"] = statistics.median(cpu)
    summary["goalSmallMessagesRowsMet"] = len(met)
    summary["goalSmallMessagesRows"] = len(small)
failures = [r for r in rows if r.get("failed")]
if failures:
    print()
    print("Failed runs (no number):")
    for r in failures:
        print(f"  {r['client']} {r['mode']} {size_name(r['size'])} × {r['connections']}: {r['error']}")
summary["failures"] = failures
json.dump(summary, open(out_path, "w"), indent=2, sort_keys=True)
print(f"\nWrote {out_path}")
EOF
for mode in $MODES; do
    [[ $mode == *-json ]] || continue
    echo
    for size in $SIZES; do
        echo "JSON payload of $size B: $("$BENCH" deflated "$size") B as a compressed message (permessage-deflate, no context takeover)"
    done
    break
done
if [ -s "$IDLE_RAW" ]; then
    python3 - "$IDLE_RAW" "$ROOT/Benchmarks/results/bench-websocket-idle.json" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
names = {"serverapikit": "ServerAPIKit", "websocket-kit": "websocket-kit"}
levels = sorted({r["connections"] for r in rows})
print()
print("Idle connections: resident memory per connection (RSS after opening them and letting them sit, over the RSS "
      "before), the process's threads, and how long opening them all took (medians).")
print()
print("| connections | KB/conn SAK | KB/conn WSK | ratio | threads SAK | threads WSK | open s SAK | open s WSK |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
summary = []
for level in levels:
    values = {}
    for client in names:
        ok = [r for r in rows if r["client"] == client and r["connections"] == level and not r.get("failed")]
        if not ok:
            values[client] = None
            continue
        values[client] = {
            "kilobytesPerConnection": statistics.median((r["rssOpenKilobytes"] - r["rssBeforeOpenKilobytes"]) / level
                                                        for r in ok),
            "threads": statistics.median(r["threads"] for r in ok),
            "openSeconds": statistics.median(r["openSeconds"] for r in ok)}
    def cell(client, key, fmt):
        return fmt.format(values[client][key]) if values[client] else "failed"
    sak, wsk = values["serverapikit"], values["websocket-kit"]
    ratio = f"{sak['kilobytesPerConnection'] / wsk['kilobytesPerConnection']:.2f}" if sak and wsk else "n/a"
    print(f"| {level} | {cell('serverapikit', 'kilobytesPerConnection', '{:.1f}')} | "
          f"{cell('websocket-kit', 'kilobytesPerConnection', '{:.1f}')} | {ratio} | "
          f"{cell('serverapikit', 'threads', '{:.0f}')} | {cell('websocket-kit', 'threads', '{:.0f}')} | "
          f"{cell('serverapikit', 'openSeconds', '{:.2f}')} | {cell('websocket-kit', 'openSeconds', '{:.2f}')} |")
    summary.append({"connections": level, **{names[c]: values[c] for c in names}})
json.dump({"idle": summary}, open(sys.argv[2], "w"), indent=2)
EOF
fi
