#!/usr/bin/env bash
# HTTP/3 end to end on libcurl's GnuTLS flavour, cheaply enough for every CI run (scripts/test.sh): the release `sapi`
# relinked against bookworm-backports' GnuTLS libcurl 8.14 (scripts/libcurl-gnutls.sh; the flavours share their
# headers, so SwiftPM only relinks: about a second), calls through the manager to the HTTP/3 peer of
# scripts/test-server.sh, and `sapi` relinked back to the system's libcurl, whatever happened. The checks:
#
#   --http-version 3 to the QUIC port          answered, `-m` says HTTP version 3
#   --http-version 3 to a TCP-only origin      falls back: answered over HTTP/1.1
#   --http-version 3-only to a TCP-only origin fails at once: exit 7 (cannot connect), "QUIC" in the message
#   --http-version 3 on a libcurl without it   (the system's GnuTLS libcurl 7.88) refused: exit 1, says what to install
#
# scripts/test.sh runs the conformance suite on that libcurl just before (the Choosing a transport article).
# Needs the test servers (scripts/test-server.sh start) and the release build (scripts/build-flags.sh). Exits 3 when
# the system is not Debian 12 (scripts/libcurl-gnutls.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-flags.sh

status=0
gnutls_env=$(scripts/libcurl-gnutls.sh) || status=$?
[ "$status" = 0 ] || exit "$status"
eval "$(scripts/test-server.sh env)"
SAPI=.build/release/sapi

relink_back() { swift build "${RELEASE_BUILD[@]}" --product sapi >/dev/null; }
trap relink_back EXIT
(eval "$gnutls_env" && swift build "${RELEASE_BUILD[@]}" --product sapi >/dev/null)

fail() {
    echo "http3-check.sh: FAILED: $*" >&2
    exit 1
}
# Runs sapi on the unpacked GnuTLS libcurl; prints its output (both streams) and its exit code last.
gnutls_sapi() {
    local code=0 output
    output=$(eval "$gnutls_env" && "$SAPI" --verify "$SAPI_H2_CA_FILE" "$@" 2>&1) || code=$?
    printf '%s\nexit %d\n' "$output" "$code"
}

out=$(gnutls_sapi --http-version 3 -m "$SAPI_H3_URL/get")
grep -q "^HTTP version: 3$" <<<"$out" || fail "--http-version 3 was not answered over QUIC: $out"
out=$(gnutls_sapi --http-version 3 -m "$SAPI_H3_ALTSVC_URL/get")
grep -q "^HTTP version: 1.1$" <<<"$out" || fail "--http-version 3 did not fall back to TCP: $out"
started=$SECONDS
out=$(gnutls_sapi --http-version 3-only "$SAPI_H3_ALTSVC_URL/get")
grep -q "^exit 7$" <<<"$out" && grep -q "QUIC" <<<"$out" || fail "--http-version 3-only did not fail as cannot connect: $out"
[ $((SECONDS - started)) -le 5 ] || fail "--http-version 3-only took $((SECONDS - started)) s to fail"
# The binary needs libcurl-gnutls.so.4: without the unpacked folder it loads the system's, 7.88, which has no HTTP/3.
code=0
out=$("$SAPI" --verify "$SAPI_H2_CA_FILE" --http-version 3 "$SAPI_H3_URL/get" 2>&1) || code=$?
[ "$code" = 1 ] && grep -q "needs a libcurl built with HTTP/3" <<<"$out" \
    || fail "--http-version 3 on a libcurl without HTTP/3 was not refused with exit 1: $out"
echo "http3-check.sh: 4 passed, 0 failed"
