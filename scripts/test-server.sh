#!/usr/bin/env bash
# Starts and stops the local test servers the integration and conformance tests talk to:
#   httpbin (from PyPI, in the virtual environment .venv-test/, served by gunicorn, also on a Unix socket),
#   the fault fixture server (Tests/Fixtures/fault_server.py, on the venv's python: its /coding/br and
#   /coding/zstd use brotlicffi and zstandard, and answer 501 without them), and
#   an HTTP/2 front for both: Debian's nginx over TLS (a CA and certificate made with openssl in
#   .build/test-servers/h2/), proxying to httpbin, to the fixture, and, with at most 8 concurrent
#   streams per connection, to the fixture again, and
#   the WebSocket peer (Tests/Fixtures/ws_server.py, the `websockets` package from the same venv), plain and over
#   TLS with the HTTP/2 front's certificate, and
#   the HTTP/3 peer (Tests/Fixtures/h3_server.py, the `aioquic` package from the same venv) over QUIC with the
#   HTTP/2 front's certificate, beside an HTTPS/1.1 origin of its own that announces it in `Alt-Svc`, and in front
#   of httpbin and the fixture (its HTTP/3 fronts: the same process, a UDP port each), and
#   two SOCKS proxies (pproxy, from PyPI, in the same venv) speaking SOCKS5 and SOCKS4: one without
#   authentication, one that needs a user name and password (SOCKS5 only). They connect to servers from
#   127.0.0.2 and 127.0.0.3, so a server sees which proxy a request came through.
# All listen on 127.0.0.1 on ports the kernel picks (SAPI_HTTPBIN_PORT=N fixes httpbin's, as the
# README's set-up does for its `sapi :8765/...` examples); their URLs are written to
# .build/test-servers.env as SAPI_HTTPBIN_URL=… and SAPI_FIXTURE_URL=…, the HTTP/2 front's as
# SAPI_HTTPBIN_H2_URL=…, SAPI_FIXTURE_H2_URL=…, SAPI_H2_LIMITED_URL=… and its CA as SAPI_H2_CA_FILE=…,
# the WebSocket peer's as SAPI_WS_URL=ws://…, SAPI_WSS_URL=wss://… and SAPI_WS_DEFLATE_URL=ws://… (compressing), the SOCKS proxies' as SAPI_SOCKS5_URL=socks5://… and SAPI_SOCKS5_AUTH_URL=socks5://USER:PASSWORD@…
# (with the test credentials it needs), and the addresses they connect from as SAPI_SOCKS5_SOURCE=… and
# SAPI_SOCKS5_AUTH_SOURCE=…, the HTTP/3 peer's as SAPI_H3_URL=https://… (UDP) and SAPI_H3_ALTSVC_URL=https://… (TCP), its fronts' as SAPI_HTTPBIN_H3_URL=https://… and
# SAPI_FIXTURE_H3_URL=https://… (UDP).
#
#   scripts/test-server.sh start   # create the venv if needed, start both, wait until they answer
#   scripts/test-server.sh stop    # stop both (by pid)
#   scripts/test-server.sh env     # print `export …` lines: eval "$(scripts/test-server.sh env)"
#   scripts/test-server.sh status
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

VENV="$ROOT/.venv-test"
REQUIREMENTS="$ROOT/scripts/requirements-test.txt"
STATE="$ROOT/.build/test-servers"
ENV_FILE="$ROOT/.build/test-servers.env"
START_TIMEOUT=${SAPI_SERVER_START_TIMEOUT:-60}

log() { echo "test-server: $*" >&2; }

STARTING=""

fail() {
    log "$1"
    for file in "$STATE"/*.log; do
        [ -f "$file" ] || continue
        echo "----- $file (last 40 lines) -----" >&2
        tail -n 40 "$file" >&2 || true
    done
    # A half-started pair of servers is stopped, not left running.
    if [ -n "$STARTING" ]; then cmd_stop; fi
    exit 1
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Debian's python3 ships without ensurepip; python3-venv brings it.
ensure_venv_support() {
    local probe
    probe=$(mktemp -d)
    if python3 -m venv "$probe/venv" >/dev/null 2>&1; then
        rm -rf "$probe"
        return
    fi
    rm -rf "$probe"
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        log "python3 -m venv does not work here: installing python3-venv with apt-get"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
    else
        fail "python3 -m venv does not work and python3-venv cannot be installed (needs apt-get as root)"
    fi
}

ensure_venv() {
    local stamp="$VENV/.requirements.sha256" wanted
    wanted=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
    if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
        return
    fi
    if [ ! -x "$VENV/bin/python" ]; then
        ensure_venv_support
        log "creating $VENV"
        python3 -m venv "$VENV"
    fi
    log "installing the test servers' Python packages"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQUIREMENTS" >&2 \
        || fail "pip could not install scripts/requirements-test.txt"
    "$VENV/bin/python" -c "import httpbin, gunicorn, pproxy, websockets, aioquic" >"$STATE/venv-check.log" 2>&1 \
        || fail "httpbin, gunicorn, pproxy, websockets or aioquic does not import"
    echo "$wanted" >"$stamp"
}

# Prints the URL once the server answers GET $2 with 200, or fails.
wait_for() {
    local name=$1 url=$2 pidfile=$3 deadline=$((SECONDS + START_TIMEOUT))
    while [ $SECONDS -lt $deadline ]; do
        alive "$pidfile" || fail "$name exited while starting"
        if "$VENV/bin/python" - "$url" <<'EOF' 2>/dev/null; then
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as response:
    sys.exit(0 if response.status == 200 else 1)
EOF
            return
        fi
        sleep 0.2
    done
    fail "$name did not answer $url within ${START_TIMEOUT}s"
}

start_httpbin() {
    local log_file="$STATE/httpbin.log" pidfile="$STATE/httpbin.pid" deadline port=""
    : >"$log_file"
    # gthread workers: the conformance suite keeps many requests open at once (delays, hangs, 200 in parallel).
    # Also on a Unix-domain socket (SAPI_HTTPBIN_SOCKET), for the calls that connect through one.
    HTTPBIN_SOCKET="$STATE/httpbin.sock"
    rm -f "$HTTPBIN_SOCKET"
    setsid "$VENV/bin/gunicorn" --bind "127.0.0.1:${SAPI_HTTPBIN_PORT:-0}" --bind "unix:$HTTPBIN_SOCKET" --workers 2 --worker-class gthread --threads 64 \
        --timeout 300 --graceful-timeout 2 --backlog 2048 --error-logfile "$log_file" --pid "$pidfile.gunicorn" \
        httpbin:app >>"$log_file" 2>&1 </dev/null &
    echo $! >"$pidfile"
    deadline=$((SECONDS + START_TIMEOUT))
    while [ -z "$port" ] && [ $SECONDS -lt $deadline ]; do
        alive "$pidfile" || fail "httpbin (gunicorn) exited while starting"
        port=$(sed -n 's#.*Listening at: http://127\.0\.0\.1:\([0-9][0-9]*\).*#\1#p' "$log_file" | head -n 1)
        [ -n "$port" ] || sleep 0.2
    done
    [ -n "$port" ] || fail "httpbin (gunicorn) did not report its port within ${START_TIMEOUT}s"
    HTTPBIN_PORT=$port
    HTTPBIN_URL="http://127.0.0.1:$port"
    wait_for httpbin "$HTTPBIN_URL/get" "$pidfile"
}

start_fixture() {
    local log_file="$STATE/fixture.log" pidfile="$STATE/fixture.pid" port_file="$STATE/fixture.port" deadline
    rm -f "$port_file"
    setsid "$VENV/bin/python" "$ROOT/Tests/Fixtures/fault_server.py" --host 127.0.0.1 --port 0 --port-file "$port_file" \
        >"$log_file" 2>&1 </dev/null &
    echo $! >"$pidfile"
    deadline=$((SECONDS + START_TIMEOUT))
    while [ ! -s "$port_file" ] && [ $SECONDS -lt $deadline ]; do
        alive "$pidfile" || fail "the fault fixture server exited while starting"
        sleep 0.1
    done
    [ -s "$port_file" ] || fail "the fault fixture server did not report its port within ${START_TIMEOUT}s"
    FIXTURE_PORT=$(tr -d '[:space:]' <"$port_file")
    FIXTURE_URL="http://127.0.0.1:$FIXTURE_PORT"
    wait_for "the fault fixture server" "$FIXTURE_URL/health" "$pidfile"
}

# The WebSocket peer (Tests/Fixtures/ws_server.py, the `websockets` package): plain, over TLS with the HTTP/2
# front's certificate (start_h2 makes it), so that SAPI_H2_CA_FILE trusts both, and plain with permessage-deflate.
start_ws() {
    local log_file="$STATE/ws.log" pidfile="$STATE/ws.pid" port_file="$STATE/ws.port" deadline ports
    rm -f "$port_file"
    setsid "$VENV/bin/python" "$ROOT/Tests/Fixtures/ws_server.py" --port-file "$port_file" \
        --cert "$STATE/h2/server.pem" --key "$STATE/h2/server.key" >"$log_file" 2>&1 </dev/null &
    echo $! >"$pidfile"
    deadline=$((SECONDS + START_TIMEOUT))
    while [ ! -s "$port_file" ] && [ $SECONDS -lt $deadline ]; do
        alive "$pidfile" || fail "the WebSocket peer exited while starting (see $log_file)"
        sleep 0.1
    done
    [ -s "$port_file" ] || fail "the WebSocket peer did not report its ports within ${START_TIMEOUT}s"
    read -r -a ports <"$port_file"
    WS_URL="ws://127.0.0.1:${ports[0]}"
    WSS_URL="wss://127.0.0.1:${ports[1]}"
    WS_DEFLATE_URL="ws://127.0.0.1:${ports[2]}"
}

# The HTTP/3 peer (Tests/Fixtures/h3_server.py, aioquic) with the HTTP/2 front's certificate (start_h2 makes it):
# QUIC on a UDP port, and an HTTPS/1.1 origin on a TCP port that announces the first in `Alt-Svc`.
start_h3() {
    local log_file="$STATE/h3.log" pidfile="$STATE/h3.pid" port_file="$STATE/h3.port" deadline ports
    rm -f "$port_file"
    setsid "$VENV/bin/python" "$ROOT/Tests/Fixtures/h3_server.py" --port-file "$port_file" \
        --cert "$STATE/h2/server.pem" --key "$STATE/h2/server.key" \
        --proxy "${HTTPBIN_URL#http://}" --proxy "${FIXTURE_URL#http://}" >"$log_file" 2>&1 </dev/null &
    echo $! >"$pidfile"
    deadline=$((SECONDS + START_TIMEOUT))
    while [ ! -s "$port_file" ] && [ $SECONDS -lt $deadline ]; do
        alive "$pidfile" || fail "the HTTP/3 peer exited while starting (see $log_file)"
        sleep 0.1
    done
    [ -s "$port_file" ] || fail "the HTTP/3 peer did not report its ports within ${START_TIMEOUT}s"
    read -r -a ports <"$port_file"
    H3_URL="https://127.0.0.1:${ports[0]}"
    H3_ALTSVC_URL="https://127.0.0.1:${ports[1]}"
    HTTPBIN_H3_URL="https://127.0.0.1:${ports[2]}"
    FIXTURE_H3_URL="https://127.0.0.1:${ports[3]}"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# A CA and a server certificate for 127.0.0.1 and localhost, made once per start.
make_h2_certificates() {
    local dir=$1
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=ServerAPIKit test CA" \
        -keyout "$dir/ca.key" -out "$dir/ca.pem" >"$dir/openssl.log" 2>&1 || fail "openssl could not make the test CA"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$dir/server.key" -out "$dir/server.csr" \
        >>"$dir/openssl.log" 2>&1 || fail "openssl could not make the server key"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
        >"$dir/server.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 30 \
        -extfile "$dir/server.ext" -out "$dir/server.pem" >>"$dir/openssl.log" 2>&1 \
        || fail "openssl could not sign the server certificate"
}

# nginx speaking HTTP/2 over TLS in front of httpbin and the fixture (nginx 1.22: `listen … ssl http2`).
# Nothing is buffered, so drips, hangs, stalls and streams reach the client as they leave the servers.
start_h2() {
    local dir="$STATE/h2" pidfile="$STATE/nginx.pid" nginx user="" deadline
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    [ -x "$nginx" ] || fail "nginx is not installed (apt-get install nginx-light): the HTTP/2 tests need it"
    command -v openssl >/dev/null 2>&1 || fail "openssl is not installed (apt-get install openssl)"
    rm -rf "$dir"
    mkdir -p "$dir/tmp"
    make_h2_certificates "$dir"
    H2_HTTPBIN_PORT=$(free_port)
    H2_FIXTURE_PORT=$(free_port)
    H2_LIMITED_PORT=$(free_port)
    # A root master hands requests to workers running as `nobody`, which could not write .build/.
    [ "$(id -u)" = 0 ] && user="user root root;"
    cat >"$dir/nginx.conf" <<EOF
daemon off;
$user
worker_processes 1;
pid $dir/nginx.pid;
error_log $STATE/nginx.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    ssl_certificate $dir/server.pem;
    ssl_certificate_key $dir/server.key;
    client_max_body_size 0;
    large_client_header_buffers 8 64k;
    underscores_in_headers on;
    keepalive_requests 100000;
    proxy_http_version 1.1;
    proxy_set_header Host \$http_host;
    proxy_set_header Connection "";
    proxy_buffering off;
    proxy_request_buffering off;
    proxy_max_temp_file_size 0;
    # The servers behind the front write absolute Locations with their own scheme (http://): the
    # client came over TLS, so they are made https:// (host and port are the front's already).
    proxy_redirect http:// https://;
    proxy_read_timeout 600s;
    proxy_send_timeout 600s;
    server {
        listen 127.0.0.1:$H2_HTTPBIN_PORT ssl http2;
        location / { proxy_pass http://127.0.0.1:$HTTPBIN_PORT; }
        # nginx's own gzip, for the content-coding tests: /nginx-gzip/X is httpbin's /X compressed by nginx.
        location /nginx-gzip/ {
            proxy_pass http://127.0.0.1:$HTTPBIN_PORT/;
            gzip on;
            gzip_proxied any;
            gzip_min_length 0;
            gzip_types *;
        }
    }
    server {
        listen 127.0.0.1:$H2_FIXTURE_PORT ssl http2;
        location / { proxy_pass http://127.0.0.1:$FIXTURE_PORT; }
        # nginx drops the trailer fields of an upstream's chunked body: for the peer suite's
        # /peer/trailers, the front writes the fixture's fields itself, as HTTP/2 trailers.
        location = /peer/trailers {
            proxy_pass http://127.0.0.1:$FIXTURE_PORT;
            add_trailer X-Trailer-One first-value;
            add_trailer X-Trailer-Two second-value;
            add_trailer X-Checksum abc123;
        }
        # The caching conformance origin (Tests/Fixtures/cache_origin.py) scripts its Date: passed on, not
        # replaced by the front's own.
        location /cache/ {
            proxy_pass http://127.0.0.1:$FIXTURE_PORT;
            proxy_pass_header Date;
        }
    }
    server {
        listen 127.0.0.1:$H2_LIMITED_PORT ssl http2;
        http2_max_concurrent_streams 8;
        location / { proxy_pass http://127.0.0.1:$FIXTURE_PORT; }
    }
}
EOF
    : >"$STATE/nginx.log"
    setsid "$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$STATE/nginx.log" >>"$STATE/nginx.log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    H2_CA_FILE="$dir/ca.pem"
    deadline=$((SECONDS + START_TIMEOUT))
    while [ $SECONDS -lt $deadline ]; do
        alive "$pidfile" || fail "nginx exited while starting"
        if "$VENV/bin/python" - "$H2_CA_FILE" "$H2_HTTPBIN_PORT" "$H2_FIXTURE_PORT" "$H2_LIMITED_PORT" <<'EOF' 2>/dev/null; then
import ssl, sys, urllib.request
context = ssl.create_default_context(cafile=sys.argv[1])
for port, path in ((sys.argv[2], "/get"), (sys.argv[3], "/health"), (sys.argv[4], "/health")):
    with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", timeout=2, context=context) as response:
        if response.status != 200:
            sys.exit(1)
EOF
            return
        fi
        sleep 0.2
    done
    fail "nginx did not answer over TLS within ${START_TIMEOUT}s"
}

# The SOCKS proxies. `--auth 0`: pproxy would otherwise let an address that authenticated once in without
# credentials for 30 days, and the wrong-password tests would pass through. The `@ADDRESS` after the listen
# URL's path is the address pproxy connects to servers from.
SOCKS_USER=sapi-socks
SOCKS_PASSWORD=socks-secret-7
SOCKS_SOURCE=127.0.0.2
SOCKS_AUTH_SOURCE=127.0.0.3

start_socks() {
    local name=$1 source=$2 users=$3 protocols=$4 pidfile="$STATE/$1.pid" port deadline
    port=$(free_port)
    setsid "$VENV/bin/pproxy" -l "$protocols://127.0.0.1:$port/@$source$users" --auth 0 -v \
        >"$STATE/$name.log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    deadline=$((SECONDS + START_TIMEOUT))
    while [ $SECONDS -lt $deadline ]; do
        alive "$pidfile" || fail "$name (pproxy) exited while starting"
        if "$VENV/bin/python" - "$port" <<'EOF' 2>/dev/null; then
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2) as connection:
    # A greeting offering no authentication and a user name and password: each answers with its choice.
    connection.sendall(b"\x05\x02\x00\x02")
    sys.exit(0 if len(connection.recv(2)) == 2 else 1)
EOF
            SOCKS_PORT=$port
            return
        fi
        sleep 0.2
    done
    fail "$name (pproxy) did not answer on 127.0.0.1:$port within ${START_TIMEOUT}s"
}

stop_one() {
    local pidfile=$1 pid
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

cmd_stop() {
    stop_one "$STATE/socks.pid"
    stop_one "$STATE/socks-auth.pid"
    stop_one "$STATE/ws.pid"
    stop_one "$STATE/h3.pid"
    stop_one "$STATE/nginx.pid"
    stop_one "$STATE/httpbin.pid"
    stop_one "$STATE/fixture.pid"
    rm -f "$ENV_FILE" "$STATE/httpbin.pid.gunicorn" "$STATE/fixture.port" "$STATE/ws.port" "$STATE/h3.port" "$STATE/httpbin.sock"
}

cmd_start() {
    mkdir -p "$STATE"
    if all_alive; then
        log "already running:"
        cat "$ENV_FILE" >&2
        return
    fi
    cmd_stop
    STARTING=1
    ensure_venv
    start_httpbin
    start_fixture
    start_h2
    start_ws
    start_h3
    start_socks socks "$SOCKS_SOURCE" "" socks4+socks5
    SOCKS5_URL="socks5://127.0.0.1:$SOCKS_PORT"
    start_socks socks-auth "$SOCKS_AUTH_SOURCE" "#$SOCKS_USER:$SOCKS_PASSWORD" socks5
    SOCKS5_AUTH_URL="socks5://$SOCKS_USER:$SOCKS_PASSWORD@127.0.0.1:$SOCKS_PORT"
    printf 'SAPI_HTTPBIN_URL=%s\nSAPI_FIXTURE_URL=%s\n' "$HTTPBIN_URL" "$FIXTURE_URL" >"$ENV_FILE"
    printf 'SAPI_HTTPBIN_SOCKET=%s\n' "$HTTPBIN_SOCKET" >>"$ENV_FILE"
    printf 'SAPI_HTTPBIN_H2_URL=https://127.0.0.1:%s\nSAPI_FIXTURE_H2_URL=https://127.0.0.1:%s\n' \
        "$H2_HTTPBIN_PORT" "$H2_FIXTURE_PORT" >>"$ENV_FILE"
    printf 'SAPI_H2_LIMITED_URL=https://127.0.0.1:%s\nSAPI_H2_CA_FILE=%s\n' "$H2_LIMITED_PORT" "$H2_CA_FILE" >>"$ENV_FILE"
    printf 'SAPI_WS_URL=%s\nSAPI_WSS_URL=%s\nSAPI_WS_DEFLATE_URL=%s\n' "$WS_URL" "$WSS_URL" "$WS_DEFLATE_URL" >>"$ENV_FILE"
    printf 'SAPI_SOCKS5_URL=%s\nSAPI_SOCKS5_AUTH_URL=%s\n' "$SOCKS5_URL" "$SOCKS5_AUTH_URL" >>"$ENV_FILE"
    printf 'SAPI_SOCKS5_SOURCE=%s\nSAPI_SOCKS5_AUTH_SOURCE=%s\n' "$SOCKS_SOURCE" "$SOCKS_AUTH_SOURCE" >>"$ENV_FILE"
    printf 'SAPI_H3_URL=%s\nSAPI_H3_ALTSVC_URL=%s\n' "$H3_URL" "$H3_ALTSVC_URL" >>"$ENV_FILE"
    printf 'SAPI_HTTPBIN_H3_URL=%s\nSAPI_FIXTURE_H3_URL=%s\n' "$HTTPBIN_H3_URL" "$FIXTURE_H3_URL" >>"$ENV_FILE"
    log "httpbin at $HTTPBIN_URL, fault fixture at $FIXTURE_URL, HTTP/2 front on https://127.0.0.1:$H2_HTTPBIN_PORT, WebSocket peer at $WS_URL, $WSS_URL and $WS_DEFLATE_URL (deflate), HTTP/3 peer at $H3_URL (UDP; Alt-Svc origin $H3_ALTSVC_URL; fronts $HTTPBIN_H3_URL and $FIXTURE_H3_URL), SOCKS proxies at $SOCKS5_URL and ${SOCKS5_AUTH_URL##*@} ($ENV_FILE)"
}

cmd_env() {
    [ -f "$ENV_FILE" ] || fail "the test servers are not running: run scripts/test-server.sh start"
    sed 's/^/export /' "$ENV_FILE"
}

all_alive() {
    alive "$STATE/httpbin.pid" && alive "$STATE/fixture.pid" && alive "$STATE/nginx.pid" && alive "$STATE/ws.pid" && alive "$STATE/h3.pid" \
        && alive "$STATE/socks.pid" \
        && alive "$STATE/socks-auth.pid" && [ -f "$ENV_FILE" ]
}

cmd_status() {
    if all_alive; then
        cat "$ENV_FILE"
    else
        echo "not running"
        return 1
    fi
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) cmd_env ;;
    status) cmd_status ;;
    *)
        echo "usage: $0 start|stop|env|status" >&2
        exit 2
        ;;
esac
