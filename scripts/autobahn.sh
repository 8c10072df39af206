#!/usr/bin/env bash
# Runs Autobahn|Testsuite's fuzzingserver, the WebSocket protocol's peer suite, for our WebSocket clients
# to connect to, and reads its report.
#
# The suite needs Python 2.7: the script finds it under pyenv (or takes SAPI_PYTHON2=/path/to/python2.7),
# makes a virtual environment for it in .venv-autobahn/ (with virtualenv 20.21.1, the last one that makes
# 2.7 environments, from a Python 3 venv in .build/autobahn/bootstrap/), and installs
# scripts/requirements-autobahn.txt into it (wsaccel builds from source: a C compiler is needed).
# The suite's cases: every client case, 1.* to 7.*, 9.*, 10.*, and 12.* and 13.* (permessage-deflate, which
# the server accepts in those cases only); SAPI_AUTOBAHN_CASES='1.*,2.*' selects others. State, the generated
# spec, the server's log and the reports live in .build/autobahn/; the server's URL is written to
# .build/autobahn.env as SAPI_AUTOBAHN_URL=ws://….
#
#   scripts/autobahn.sh install      # create or update the venv only
#   scripts/autobahn.sh start        # start the fuzzingserver on 127.0.0.1 (SAPI_AUTOBAHN_PORT=N fixes the port)
#   scripts/autobahn.sh stop         # stop it (by pid)
#   scripts/autobahn.sh env          # print `export …` lines: eval "$(scripts/autobahn.sh env)"
#   scripts/autobahn.sh status
#   scripts/autobahn.sh reference    # run the Python reference client (scripts/autobahn_reference_client.py)
#   scripts/autobahn.sh client [--no-build] [--transport curl|urlsession]
#                                    # run our runner (Sources/serverapi-autobahn, a release build): curl on the
#                                    # bookworm-backports' libcurl (scripts/libcurl-backports.sh), or URLSession;
#                                    # --no-build runs it as it was last built
#   scripts/autobahn.sh report [--agent NAME] [--expected-failures FILE] [--reports DIR]
#                                    # per group pass/fail counts; exits 1 if a case failed that FILE
#                                    # (default scripts/autobahn-expected-failures.txt) does not allow
#
# A client runs the cases as Tests/Autobahn/README.md describes, then asks for /updateReports; `report`
# then reads .build/autobahn/reports/clients/index.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

VENV="$ROOT/.venv-autobahn"
REQUIREMENTS="$ROOT/scripts/requirements-autobahn.txt"
CLIENT_REQUIREMENTS="$ROOT/scripts/requirements-autobahn-client.txt"
STATE="$ROOT/.build/autobahn"
BOOTSTRAP="$STATE/bootstrap"
CLIENT_VENV="$STATE/client-venv"
ENV_FILE="$ROOT/.build/autobahn.env"
START_TIMEOUT=${SAPI_AUTOBAHN_START_TIMEOUT:-60}
CASES=${SAPI_AUTOBAHN_CASES:-1.*,2.*,3.*,4.*,5.*,6.*,7.*,9.*,10.*,12.*,13.*}
VIRTUALENV_VERSION=20.21.1

log() { echo "autobahn: $*" >&2; }

STARTING=""

fail() {
    log "$1"
    if [ -f "$STATE/server.log" ]; then
        echo "----- $STATE/server.log (last 40 lines) -----" >&2
        tail -n 40 "$STATE/server.log" >&2 || true
    fi
    if [ -n "$STARTING" ]; then cmd_stop; fi
    exit 1
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Python 2.7: SAPI_PYTHON2, else pyenv's 2.7.x, else a python2.7 on PATH that really is 2.7.
find_python2() {
    local candidate root
    if [ -n "${SAPI_PYTHON2:-}" ]; then
        echo "$SAPI_PYTHON2"
        return
    fi
    root=${PYENV_ROOT:-}
    if [ -z "$root" ] && command -v pyenv >/dev/null 2>&1; then root=$(pyenv root 2>/dev/null || true); fi
    [ -n "$root" ] || root="$HOME/.pyenv"
    for candidate in $(ls -d "$root"/versions/2.7.* 2>/dev/null | sort -V -r); do
        if [ -x "$candidate/bin/python2.7" ]; then
            echo "$candidate/bin/python2.7"
            return
        fi
    done
    if command -v python2.7 >/dev/null 2>&1 && python2.7 -c 'import sys; sys.exit(sys.version_info[:2] != (2, 7))' 2>/dev/null; then
        command -v python2.7
        return
    fi
    return 1
}

# Debian's python3 ships without ensurepip; python3-venv brings it. wsaccel needs a C compiler.
ensure_system_tools() {
    local missing=()
    local probe
    probe=$(mktemp -d)
    python3 -m venv "$probe/venv" >/dev/null 2>&1 || missing+=(python3-venv)
    rm -rf "$probe"
    command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
    [ ${#missing[@]} -eq 0 ] && return
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        log "installing ${missing[*]} with apt-get"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    else
        fail "${missing[*]} missing and cannot be installed (needs apt-get as root)"
    fi
}

ensure_venv() {
    local stamp="$VENV/.requirements.sha256" wanted python2
    mkdir -p "$STATE"
    wanted=$( (sha256sum "$REQUIREMENTS"; echo "$VIRTUALENV_VERSION") | sha256sum | cut -d' ' -f1)
    if [ -x "$VENV/bin/wstest" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
        return
    fi
    python2=$(find_python2) || fail "no Python 2.7 found: install it with pyenv (pyenv install 2.7.18) or set SAPI_PYTHON2"
    ensure_system_tools
    if [ ! -x "$VENV/bin/python" ]; then
        if [ ! -x "$BOOTSTRAP/bin/virtualenv" ]; then
            log "creating $BOOTSTRAP (virtualenv $VIRTUALENV_VERSION, to make a Python 2.7 environment)"
            python3 -m venv "$BOOTSTRAP"
            "$BOOTSTRAP/bin/python" -m pip install --disable-pip-version-check -q "virtualenv==$VIRTUALENV_VERSION" >&2 \
                || fail "pip could not install virtualenv==$VIRTUALENV_VERSION"
        fi
        log "creating $VENV with $python2"
        "$BOOTSTRAP/bin/virtualenv" -q -p "$python2" "$VENV" >&2 || fail "virtualenv could not make $VENV"
    fi
    log "installing Autobahn|Testsuite (scripts/requirements-autobahn.txt)"
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-python-version-warning -q -r "$REQUIREMENTS" >&2 \
        || fail "pip could not install scripts/requirements-autobahn.txt"
    "$VENV/bin/wstest" --autobahnversion >"$STATE/venv-check.log" 2>&1 \
        || { cat "$STATE/venv-check.log" >&2; fail "wstest does not run"; }
    echo "$wanted" >"$stamp"
}

ensure_client_venv() {
    local stamp="$CLIENT_VENV/.requirements.sha256" wanted
    wanted=$(sha256sum "$CLIENT_REQUIREMENTS" | cut -d' ' -f1)
    if [ -x "$CLIENT_VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
        return
    fi
    ensure_system_tools
    [ -x "$CLIENT_VENV/bin/python" ] || python3 -m venv "$CLIENT_VENV"
    log "installing the reference client's packages (scripts/requirements-autobahn-client.txt)"
    "$CLIENT_VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$CLIENT_REQUIREMENTS" >&2 \
        || fail "pip could not install scripts/requirements-autobahn-client.txt"
    echo "$wanted" >"$stamp"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# The spec: the selected case groups, reports under $STATE/reports/clients.
write_spec() {
    local url=$1
    python3 - "$url" "$CASES" "$STATE/reports/clients" >"$STATE/fuzzingserver.json" <<'EOF'
import json, sys
url, cases, outdir = sys.argv[1:4]
print(json.dumps({
    "url": url,
    "outdir": outdir,
    "cases": [case.strip() for case in cases.split(",") if case.strip()],
    "exclude-cases": [],
    "exclude-agent-cases": {},
}, indent=3))
EOF
}

start_server() {
    local port=$1 pidfile="$STATE/server.pid" deadline
    URL="ws://127.0.0.1:$port"
    write_spec "$URL"
    : >"$STATE/server.log"
    # Run from $STATE: the suite writes nothing outside its outdir, but keeps the work tree clean if it does.
    (cd "$STATE" && exec setsid "$VENV/bin/wstest" -m fuzzingserver -s "$STATE/fuzzingserver.json" -u 0 \
        >>"$STATE/server.log" 2>&1 </dev/null) &
    echo $! >"$pidfile"
    deadline=$((SECONDS + START_TIMEOUT))
    while [ $SECONDS -lt $deadline ]; do
        alive "$pidfile" || return 1
        if grep -q '^Cases = ' "$STATE/server.log" && python3 - "$port" <<'EOF' 2>/dev/null; then
import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
EOF
            return 0
        fi
        sleep 0.2
    done
    fail "the fuzzingserver did not listen on $URL within ${START_TIMEOUT}s"
}

cmd_install() { ensure_venv; }

# Exit 0 when a Python 2.7 for the suite is there, 1 when not (scripts/test.sh runs the suite only then).
cmd_can_run() { find_python2 >/dev/null; }

cmd_start() {
    local port attempt
    mkdir -p "$STATE"
    if alive "$STATE/server.pid"; then
        log "already running ($(cat "$ENV_FILE" 2>/dev/null || true)); stop it first"
        exit 1
    fi
    ensure_venv
    STARTING=1
    rm -rf "$STATE/reports"
    mkdir -p "$STATE/reports/clients"
    for attempt in 1 2 3; do
        port=${SAPI_AUTOBAHN_PORT:-$(free_port)}
        if start_server "$port"; then break; fi
        # The port the kernel gave us can be taken before the server binds it: try another.
        [ -z "${SAPI_AUTOBAHN_PORT:-}" ] && [ $attempt -lt 3 ] || fail "the fuzzingserver exited while starting"
        log "the fuzzingserver exited while starting on port $port; trying another port"
    done
    # The case ids the server will run, in order (case N of /runCase?case=N is the Nth): `report` checks
    # that every one of them was run.
    sed -n 's/^Cases = //p' "$STATE/server.log" | head -n 1 | tr "'" '"' >"$STATE/cases.json"
    {
        echo "SAPI_AUTOBAHN_URL=$URL"
        echo "SAPI_AUTOBAHN_REPORTS=$STATE/reports/clients"
    } >"$ENV_FILE"
    STARTING=""
    log "fuzzingserver at $URL ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$STATE/cases.json") cases: $CASES)"
}

stop_one() {
    local pidfile=$1 pid
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

cmd_stop() {
    stop_one "$STATE/server.pid"
    rm -f "$ENV_FILE"
}

cmd_env() {
    [ -f "$ENV_FILE" ] || { log "not running (no $ENV_FILE): run scripts/autobahn.sh start"; exit 1; }
    sed 's/^/export /' "$ENV_FILE"
}

cmd_status() {
    if alive "$STATE/server.pid"; then
        echo "fuzzingserver: running (pid $(cat "$STATE/server.pid")), $(grep SAPI_AUTOBAHN_URL "$ENV_FILE" 2>/dev/null || true)"
    else
        echo "fuzzingserver: stopped"
        exit 1
    fi
}

cmd_reference() {
    alive "$STATE/server.pid" || { log "not running: run scripts/autobahn.sh start"; exit 1; }
    ensure_client_venv
    # shellcheck disable=SC1090
    . "$ENV_FILE"
    "$CLIENT_VENV/bin/python" "$ROOT/scripts/autobahn_reference_client.py" --url "$SAPI_AUTOBAHN_URL" "$@"
}

# Our runner (Sources/serverapi-autobahn), built in release, on one transport: curl on bookworm-backports' libcurl
# (scripts/libcurl-backports.sh prints its folder; SAPI_LIBCURL_WS_DIR overrides), or urlsession.
cmd_client() {
    local transport=curl libdir=""
    alive "$STATE/server.pid" || { log "not running: run scripts/autobahn.sh start"; exit 1; }
    local build=1
    if [ "${1:-}" = "--no-build" ]; then
        build=""
        shift
    fi
    [ "${1:-}" = "--transport" ] && transport=${2:-curl}
    # The release build scripts/test.sh makes (scripts/build-flags.sh): after it, nothing is left to build. With
    # --no-build (scripts/test.sh, beside a `swift test` that holds .build) the runner is run as it was built.
    source "$ROOT/scripts/build-flags.sh"
    if [ -n "$build" ]; then
        swift build --package-path "$ROOT" "${RELEASE_BUILD[@]}" --product serverapi-autobahn >&2
    fi
    if [ "$transport" = curl ]; then
        libdir=${SAPI_LIBCURL_WS_DIR:-$("$ROOT/scripts/libcurl-backports.sh")}
    fi
    # shellcheck disable=SC1090
    . "$ENV_FILE"
    LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$ROOT/.build/release/serverapi-autobahn" "$SAPI_AUTOBAHN_URL" "$@"
}

cmd_report() {
    python3 "$ROOT/scripts/autobahn_report.py" --reports "$STATE/reports/clients" --cases "$STATE/cases.json" \
        --expected-failures "$ROOT/scripts/autobahn-expected-failures.txt" "$@"
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
    install) cmd_install ;;
    can-run) cmd_can_run ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) cmd_env ;;
    status) cmd_status ;;
    reference) cmd_reference "$@" ;;
    client) cmd_client "$@" ;;
    report) cmd_report "$@" ;;
    *)
        echo "usage: $0 install|start|stop|env|status|reference [--agent NAME]|client [--no-build] [--transport curl|urlsession]|report [--agent NAME] [--expected-failures FILE]" >&2
        exit 2
        ;;
esac
