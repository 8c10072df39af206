#!/usr/bin/env bash
# Makes a throw-away CA and a server certificate it signed, for the TLS tests:
#   DIR/ca.pem, DIR/server.pem, DIR/server.key. The server certificate names 127.0.0.1 only
#   (not "localhost"), so the tests can check host name verification too.
set -euo pipefail
dir="$1"
cd "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
    -days 2 -subj "/CN=ServerAPIKit Test CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
    -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
    -extfile server.ext 2>/dev/null
