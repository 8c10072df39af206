# Sourced by scripts/test.sh, scripts/demo.sh and scripts/build-sapi.sh: installs the system packages they need with
# apt-get when they are missing, so that they run on a machine with only the Swift toolchain, python3 and apt.
# (The test servers' `python3 -m venv` is scripts/test-server.sh's own business: it installs python3-venv.)

apt_install() {
    if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
        echo "$(basename "$0"): missing system packages ($*) and no apt-get as root to install them" >&2
        exit 1
    fi
    if [ -z "${APT_UPDATED:-}" ]; then
        apt-get update -qq
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# What building the package needs: the curl backend (Backends/CCurl) builds against libcurl, and the core's WebSocket
# compression (Sources/CZlib) against zlib, both found through pkg-config.
ensure_build_packages() {
    if ! command -v pkg-config >/dev/null 2>&1; then apt_install pkg-config; fi
    if ! pkg-config --exists libcurl; then apt_install libcurl4-openssl-dev; fi
    if ! pkg-config --exists zlib; then apt_install zlib1g-dev; fi
}

# What scripts/test-server.sh needs: openssl makes the HTTP/2 front's certificates (and the curl backend's TLS
# tests make theirs with it); the HTTP/2 front is Debian's nginx.
ensure_test_server_packages() {
    if ! command -v openssl >/dev/null 2>&1; then apt_install openssl; fi
    if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then apt_install nginx-light; fi
}
