#!/usr/bin/env bash
# Makes throw-away certificates for the TLS tests in DIR (valid for 2 days):
#   ca.pem, ca.key                 a test CA
#   server.pem, server.key         signed by it for 127.0.0.1 only (not "localhost"), so the tests can
#                                  check host name verification too
#   wrong-host.pem, wrong-host.key signed by it for wrong-host.invalid only
#   expired.pem, expired.key       signed by it for 127.0.0.1, valid only in January 2020
#   server.pub.pem, backup.pub.pem the server's public key and an unrelated one (PEM), for pinning by file
#   server.pin, backup.pin         base64 SHA-256 of the DER SubjectPublicKeyInfo of the server's key and
#                                  of an unrelated key (libcurl's sha256// pin form without the prefix)
#   client-ca.pem, client-ca.key   the CA that the client-certificate server trusts for clients
#   client.pem, client.key         a client certificate it signed (CN=ServerAPIKit Test Client)
#   client-encrypted.key           the same key encrypted with the passphrase "test-passphrase"
#   stranger.pem, stranger.key     a client certificate signed by the server CA, not the client CA
#   server-rsa.pem, server-rsa.key as server.pem, with an RSA key: what an old device's static-RSA suite needs
set -euo pipefail
command -v openssl >/dev/null || { echo "make_test_certificates.sh: openssl is not installed (scripts/test.sh installs it)" >&2; exit 1; }
dir="$1"
cd "$dir"
key() {
    case "$1" in
        *-rsa.key) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>/dev/null ;;
        *) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1" 2>/dev/null ;;
    esac
}
ca() { # name subject
    key "$1.key"
    openssl req -x509 -key "$1.key" -out "$1.pem" -days 2 -subj "$2" 2>/dev/null
}
leaf() { # name subject ca extensions
    key "$1.key"
    openssl req -new -key "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
    printf '%b' "$4" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial -out "$1.pem" -days 2 \
        -extfile "$1.ext" 2>/dev/null
}
pin() { openssl pkey -in "$1" -pubout -outform der 2>/dev/null | openssl dgst -sha256 -binary | base64; }

ca ca "/CN=ServerAPIKit Test CA"
leaf server "/CN=127.0.0.1" ca 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n'
leaf server-rsa "/CN=127.0.0.1" ca 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n'
leaf wrong-host "/CN=wrong-host.invalid" ca \
    'subjectAltName=DNS:wrong-host.invalid\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n'
openssl pkey -in server.key -pubout -out server.pub.pem 2>/dev/null
pin server.key > server.pin
key backup.key
pin backup.key > backup.pin
openssl pkey -in backup.key -pubout -out backup.pub.pem 2>/dev/null

# `openssl x509` cannot back-date a certificate; `openssl ca` can.
key expired.key
openssl req -new -key expired.key -out expired.csr -subj "/CN=127.0.0.1" 2>/dev/null
: > index.txt
printf '[ca]\ndefault_ca = test\n[test]\ndatabase = index.txt\nnew_certs_dir = .\nserial = expired.srl\n' > expired.cnf
printf 'default_md = sha256\npolicy = any\n[any]\ncommonName = supplied\n' >> expired.cnf
echo 01 > expired.srl
openssl ca -batch -notext -config expired.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem \
    -startdate 20200101000000Z -enddate 20200131000000Z -extfile server.ext 2>/dev/null

ca client-ca "/CN=ServerAPIKit Test Client CA"
leaf client "/CN=ServerAPIKit Test Client" client-ca 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n'
openssl pkey -in client.key -aes256 -passout pass:test-passphrase -out client-encrypted.key 2>/dev/null
leaf stranger "/CN=ServerAPIKit Stranger" ca 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n'
