#!/usr/bin/env python3
"""A tiny forwarding HTTP proxy for ServerAPIKit's proxy tests (standard library only).

Started by the tests, one per test, on a free loopback port; prints "PORT <n>" on its first line
once it listens and exits when its stdin closes (or on SIGTERM).

    python3 forward_proxy.py [--user NAME:PASSWORD] [--certfile F --keyfile K]

- Absolute-form requests (`GET http://127.0.0.1:PORT/path HTTP/1.1`) are forwarded to the origin
  with a `Via: 1.1 serverapikit-proxy` header added (so an echoing upstream shows the request came
  through here), `Proxy-Authorization` and `Proxy-Connection` removed, and the answer relayed as is.
- `CONNECT host:port` opens a tunnel and relays bytes both ways.
- With --user, a request without the matching `Proxy-Authorization: Basic …` gets 407 with
  `Proxy-Authenticate: Basic realm="fixture"`.
- With --certfile/--keyfile the proxy itself speaks TLS (an https:// proxy).
- `GET /__proxy/stats` (origin form, sent to the proxy itself): JSON counts of forwarded requests,
  tunnels and 407 answers, so tests can tell whether traffic went through the proxy.

Only loopback origins are allowed. Credentials are never printed.
"""

import argparse
import base64
import json
import select
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

VIA = "1.1 serverapikit-proxy"
ALLOWED_HOSTS = {"127.0.0.1", "localhost", "::1"}
HOP_BY_HOP = {"proxy-authorization", "proxy-connection", "connection", "keep-alive"}

_stats = {"forwarded": 0, "tunnels": 0, "rejected": 0}
_stats_lock = threading.Lock()


def count(name):
    with _stats_lock:
        _stats[name] += 1


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "serverapikit-proxy"
    sys_version = ""

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    def __getattr__(self, name):
        if name.startswith("do_"):
            return self.dispatch
        raise AttributeError(name)

    def send_small(self, status, body, headers=()):
        data = body.encode("utf-8")
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def authorized(self):
        expected = self.server.credentials
        if expected is None:
            return True
        given = self.headers.get("Proxy-Authorization", "")
        if given == "Basic " + base64.b64encode(expected.encode("utf-8")).decode("ascii"):
            return True
        count("rejected")
        self.drain_body()
        self.send_small(407, "proxy authentication required\n",
                        [("Proxy-Authenticate", 'Basic realm="fixture"'), ("Content-Type", "text/plain")])
        return False

    def drain_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        while length > 0:
            piece = self.rfile.read(min(length, 65536))
            if not piece:
                break
            length -= len(piece)

    def dispatch(self):
        if self.path.startswith("/"):
            if self.path == "/__proxy/stats":
                with _stats_lock:
                    body = json.dumps(_stats)
                return self.send_small(200, body, [("Content-Type", "application/json")])
            return self.send_small(400, "not a proxy request\n")
        if not self.authorized():
            return
        parts = urlsplit(self.path)
        if parts.scheme != "http" or parts.hostname not in ALLOWED_HOSTS:
            self.drain_body()
            return self.send_small(403, "only http://127.0.0.1 and http://localhost are forwarded\n")
        count("forwarded")
        try:
            upstream = socket.create_connection((parts.hostname, parts.port or 80), timeout=30)
        except OSError:
            self.drain_body()
            return self.send_small(502, "the origin cannot be reached\n")
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        head = ["%s %s HTTP/1.1" % (self.command, target)]
        for name, value in self.headers.items():
            if name.lower() not in HOP_BY_HOP:
                head.append("%s: %s" % (name, value))
        head.append("Via: " + VIA)
        # One request per upstream connection: the answer ends when the origin closes.
        head.append("Connection: close")
        upstream.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        self.relay_body(upstream)
        self.wfile.flush()
        # The origin's answer goes back as is, then the client connection closes too (its end may
        # be marked only by the close).
        while True:
            try:
                data = upstream.recv(65536)
            except OSError:
                break
            if not data:
                break
            self.wfile.write(data)
        upstream.close()
        self.close_connection = True

    def relay_body(self, upstream):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                line = self.rfile.readline(65537)
                upstream.sendall(line)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while True:
                        trailer = self.rfile.readline(65537)
                        upstream.sendall(trailer)
                        if trailer in (b"\r\n", b"\n", b""):
                            return
                upstream.sendall(self.rfile.read(size + 2))
        length = int(self.headers.get("Content-Length") or 0)
        while length > 0:
            piece = self.rfile.read(min(length, 65536))
            if not piece:
                return
            upstream.sendall(piece)
            length -= len(piece)

    def do_CONNECT(self):
        if not self.authorized():
            return
        host, _, port = self.path.rpartition(":")
        host = host.strip("[]")
        if host not in ALLOWED_HOSTS:
            return self.send_small(403, "only loopback tunnels\n")
        try:
            upstream = socket.create_connection((host, int(port)), timeout=30)
        except (OSError, ValueError):
            return self.send_small(502, "the origin cannot be reached\n")
        count("tunnels")
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        client = self.connection
        sockets = [client, upstream]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 60)
                if not readable:
                    break
                done = False
                for source in readable:
                    data = source.recv(65536)
                    if not data:
                        done = True
                        break
                    (upstream if source is client else client).sendall(data)
                if done:
                    break
        except OSError:
            pass
        upstream.close()
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", help="NAME:PASSWORD the clients must send (Basic)")
    parser.add_argument("--certfile")
    parser.add_argument("--keyfile")
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.credentials = args.user
    if args.certfile:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.certfile, args.keyfile)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    # Exit when the test process closes our stdin (also when it dies).
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
