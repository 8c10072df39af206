#!/usr/bin/env python3
"""A small HTTP/1.1 server for the libcurl backend's tests (standard library only).

Started by the tests on a free loopback port; prints "PORT <n>" on its first line once it listens.
With --host ::1 it listens on the IPv6 loopback instead of 127.0.0.1.
With --certfile/--keyfile it serves HTTPS instead; with --client-ca as well, it requires a client
certificate signed by that CA (TLS 1.3, Python's ssl CERT_REQUIRED).

Routes (any method unless said):
  /echo                   JSON: method, path, query, headers (in order), body (base64), body_length
  /status/<code>          that status, a short text body
  /redirect/<n>           302 to /redirect/<n-1>; /redirect/0 answers like /echo
  /redirect-to?url=U&status=S   S (default 302) with Location: U
  /loop                   302 to /loop, forever
  /gzip                   a gzip-encoded JSON body (Content-Encoding: gzip)
  /bytes/<n>              n bytes (byte i is i % 251) with Content-Length; ?chunked=1 streams without it
  /delay?seconds=S        waits S seconds (or until the client goes away), then answers 200
  /drip?bytes=N&seconds=S sends N bytes one at a time over S seconds
  /informational          a 103 Early Hints head, then the real 200 head and body
  /headers                repeated response headers (two Set-Cookie), for header parsing
  /close                  closes the connection without answering
  /truncate               announces 1000 bytes, sends 10, closes
  /cookie-echo            like /echo (used as a cross-host redirect target)
  /whoami                 JSON: the client certificate's subject ({"subject": "CN=…"} or {"subject": null})
"""

import argparse
import base64
import gzip
import json
import select
import socket
import ssl
import struct
import sys
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "curl-test-server"
    sys_version = ""

    def log_message(self, format, *args):  # keep test output clean
        pass

    # Every method goes through one dispatcher.
    def do_GET(self):
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    def __getattr__(self, name):
        # Custom methods such as PROPFIND.
        if name.startswith("do_"):
            return self.dispatch
        raise AttributeError(name)

    def read_body(self):
        length = self.headers.get("Content-Length")
        if length is not None:
            return self.rfile.read(int(length))
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def send(self, status, body=b"", content_type="text/plain", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def echo(self, body):
        split = urlsplit(self.path)
        payload = {
            "method": self.command,
            "path": split.path,
            "query": split.query,
            "headers": [[name, value] for name, value in self.headers.items()],
            "body": base64.b64encode(body).decode("ascii"),
            "body_length": len(body),
        }
        self.send(200, json.dumps(payload).encode(), "application/json")

    def client_gone(self, timeout):
        readable, _, _ = select.select([self.connection], [], [], timeout)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def dispatch(self):
        split = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        parts = [p for p in split.path.split("/") if p]
        body = self.read_body()
        route = parts[0] if parts else ""

        if route == "whoami":
            peer = self.connection.getpeercert() if isinstance(self.connection, ssl.SSLSocket) else None
            subject = None
            if peer:
                subject = ",".join(f"{k}={v}" for rdn in peer.get("subject", ()) for k, v in rdn)
                subject = subject.replace("commonName=", "CN=")
            return self.send(200, json.dumps({"subject": subject}).encode(), "application/json")
        if route in ("echo", "cookie-echo"):
            return self.echo(body)
        if route == "status" and len(parts) > 1:
            code = int(parts[1])
            return self.send(code, f"status {code}".encode())
        if route == "redirect" and len(parts) > 1:
            n = int(parts[1])
            if n <= 0:
                return self.echo(body)
            return self.send(302, b"redirecting", headers=[("Location", f"/redirect/{n - 1}")])
        if route == "redirect-to":
            status = int(query.get("status", "302"))
            return self.send(status, b"redirecting", headers=[("Location", query["url"])])
        if route == "loop":
            return self.send(302, b"again", headers=[("Location", "/loop")])
        if route == "gzip":
            payload = json.dumps({"gzipped": True, "filler": "x" * 2000}).encode()
            return self.send(200, gzip.compress(payload), "application/json", [("Content-Encoding", "gzip")])
        if route == "bytes" and len(parts) > 1:
            n = int(parts[1])
            data = bytes(i % 251 for i in range(n))
            if query.get("chunked") == "1":
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for start in range(0, n, 65536):
                    chunk = data[start:start + 65536]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
                return
            return self.send(200, data, "application/octet-stream")
        if route == "delay":
            deadline = time.monotonic() + float(query.get("seconds", "1"))
            while time.monotonic() < deadline:
                if self.client_gone(min(0.05, max(0, deadline - time.monotonic()))):
                    self.close_connection = True
                    return
            return self.send(200, b"late")
        if route == "drip":
            n = int(query.get("bytes", "10"))
            pause = float(query.get("seconds", "1")) / max(n, 1)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            try:
                for _ in range(n):
                    self.wfile.write(b"*")
                    self.wfile.flush()
                    time.sleep(pause)
            except OSError:
                self.close_connection = True
            return
        if route == "informational":
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\nX-Early: yes\r\n\r\n")
            return self.send(200, b"final", headers=[("X-Final", "yes")])
        if route == "headers":
            return self.send(
                200, b"ok", headers=[("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("X-Spaced", "  padded value  ")])
        if route == "close":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if route == "truncate":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        return self.send(404, b"no such route")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512
    tls_context = None
    reset_after_handshake = False

    def get_request(self):
        sock, address = super().get_request()
        if self.tls_context is not None:
            # The handshake runs in the connection's thread (finish_request), not in accept: a client
            # that stalls or fails its handshake cannot hold up the others.
            sock = self.tls_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def finish_request(self, request, client_address):
        if isinstance(request, ssl.SSLSocket):
            request.settimeout(10)
            try:
                request.do_handshake()
            except (ssl.SSLError, OSError):
                # OpenSSL has sent its alert (certificate required, unknown CA, ...). Read what the client
                # already sent before closing: closing with unread data would reset the connection, and
                # the client could then see "connection reset" instead of the alert.
                drain(request)
                return
            request.settimeout(None)
            if self.reset_after_handshake:
                # As a server that checks a client certificate after a TLS 1.3 handshake and drops the client
                # at once: the request arrives, and the connection is reset without an answer or an alert.
                select.select([request], [], [], 10)
                request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                socket.socket.close(request)
                return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        # Clients that cancel close their connections mid-request: expected, not worth a traceback.
        if isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class IPv6Server(Server):
    address_family = socket.AF_INET6


def drain(sock):
    try:
        sock.settimeout(2)
        socket.socket.shutdown(sock, socket.SHUT_WR)
        while socket.socket.recv(sock, 65536):
            pass
    except OSError:
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on; ::1 for IPv6 loopback")
    parser.add_argument("--certfile")
    parser.add_argument("--keyfile")
    parser.add_argument("--client-ca")
    parser.add_argument("--reset-after-handshake", action="store_true",
                        help="reset each TLS connection once the handshake is done and the request has arrived")
    parser.add_argument("--only-tls-1-1", action="store_true",
                        help="offer TLS 1.1 alone, with a static-RSA suite (AES128-SHA), as an old device does")
    args = parser.parse_args()
    server_class = IPv6Server if ":" in args.host else Server
    server = server_class((args.host, args.port), Handler)
    if args.certfile:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.certfile, args.keyfile)
        if args.only_tls_1_1:
            # OpenSSL 3 needs security level 0 for TLS 1.1 at all; a static-RSA suite signs no key exchange, so a
            # client's own OpenSSL at its default level 1 would take it: only the client's protocol floor refuses.
            context.set_ciphers("AES128-SHA:@SECLEVEL=0")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                context.minimum_version = ssl.TLSVersion.TLSv1_1
                context.maximum_version = ssl.TLSVersion.TLSv1_1
        if args.client_ca:
            context.load_verify_locations(args.client_ca)
            context.verify_mode = ssl.CERT_REQUIRED
        server.tls_context = context
        server.reset_after_handshake = args.reset_after_handshake
    print(f"PORT {server.server_address[1]}", flush=True)
    # End with the test process: stdin closes when the parent goes away.
    import threading

    def watch_parent():
        sys.stdin.read()
        server.shutdown()

    threading.Thread(target=watch_parent, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
