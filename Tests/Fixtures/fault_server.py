#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 server for ServerAPIKit's transport tests.

It does what httpbin cannot: drop connections, lie about lengths, hang, ignore Range,
serve large deterministic resources as a stream, and swallow large uploads while
hashing them. Python standard library only; one thread per connection.

    python3 fault_server.py --port 0 --port-file /tmp/port

Routes (GET unless said; every route also answers HEAD where that makes sense):

  /health                          200 "ok"
  /resource?size=N&seed=S          N deterministic bytes; honours Range (206 + Content-Range),
                                   ETag, Last-Modified and If-Range; 416 past the end.
        &drop_after=K              closes the connection before the byte at offset K is sent; a
                                   response that starts at or past K is whole (resuming works)
        &stall_after=K             sends the bytes before offset K, then stalls (sends nothing more)
                                   until the client goes away; a response that starts at or past K
                                   is whole (resuming works)
        &ignore_range=1            always 200 with the whole body
        &etag=VALUE                serve this ETag instead of the default
        &rate=BYTES_PER_SECOND     send slowly
        &chunked=1                 no Content-Length, chunked transfer encoding
  /resource/norange?size=N         the resource, ignoring Range (always 200 full body)
  /resource/416?size=N             always 416 with Content-Range: bytes */N
  /resource/sha256?size=N&seed=S   the hex SHA-256 of the resource (text)
  /resource/error/CODE             status CODE with a text body (a download must never write it)
        ?size=N                    the text repeated to exactly N bytes
  /close-mid-body?size=N&after=K   Content-Length N, sends K bytes, closes
  /wrong-length?size=N&extra=M     Content-Length N+M, sends N bytes, closes
  /huge-length                     Content-Length: 2000000000 on a tiny body, then closes
  /hang                            reads the request, never answers, until the client goes away
  /hang-body?size=N&after=K        sends the head and K bytes, then stalls until the client goes away
  /drip?size=N&interval_ms=M&chunk=C  N bytes, C at a time, M ms apart
  /redirect-loop                   302 to itself
  /redirect-chain/N                302 to /redirect-chain/N-1; /redirect-chain/0 echoes headers
  /redirect-cross-host?path=P      302 to the same port on the other loopback name
                                   (127.0.0.1 <-> localhost), path P (default /headers)
  /redirect-to?url=U&status=302    redirect to U
  /headers                         JSON: method, path, query and the headers in order (repeats kept)
  /echo (any method)               JSON: method, path, query, headers, body length, SHA-256 and
                                   the body (base64) when at most 16 MiB; reads a Content-Length or a
                                   chunked body: "chunked" (bool) and "content_length_header" (the
                                   Content-Length header as sent, or null) say which it was
  /upload-sink (any method)        reads the body streaming; JSON: length and SHA-256 (and "chunked",
                                   "content_length_header") only
        &range_start=A&range_length=N  also the SHA-256 of body bytes [A, A+N) (a multipart file part)
        &keep_head=K&keep_tail=K   also the first / last K bytes (base64)
  /gzip                            a gzip-encoded JSON body (Content-Encoding: gzip)
  /status/CODE                     status CODE with a short text body
  /connections                     JSON: connections accepted so far
  /barrier?n=N&key=K               holds each request until N requests with key K have arrived, then
                                   answers them all 200 (JSON: arrived); 504 for a request still
                                   waiting after BARRIER_LIMIT_SECONDS (the calls were not side by side)

The resource's bytes: a 64 KiB base block from xorshift64* seeded with `seed`; chunk k of
the resource is the base block rotated left by (k * 7919) % 65536. Tests regenerate the same
bytes to compare without hashing (see FixturePayload.swift).
"""

import argparse
import base64
import gzip
import hashlib
import json
import os
import select
import socket
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

BLOCK = 65536
MASK64 = (1 << 64) - 1
LAST_MODIFIED = formatdate(1_700_000_000, usegmt=True)
ECHO_BODY_LIMIT = 16 * 1024 * 1024
HANG_LIMIT_SECONDS = 300
BARRIER_LIMIT_SECONDS = 10

_base_blocks = {}
_base_lock = threading.Lock()
_sha_cache = {}
_connections = 0
_connections_lock = threading.Lock()
_barrier_arrivals = {}
_barrier_condition = threading.Condition()


def base_block(seed):
    """The 64 KiB block every chunk of the resource is a rotation of."""
    with _base_lock:
        block = _base_blocks.get(seed)
        if block is not None:
            return block
        x = (seed * 0x9E3779B97F4A7C15 + 1) & MASK64 or 1
        words = bytearray()
        for _ in range(BLOCK // 8):
            x ^= x >> 12
            x ^= (x << 25) & MASK64
            x ^= x >> 27
            words += ((x * 0x2545F4914F6CDD1D) & MASK64).to_bytes(8, "little")
        block = bytes(words)
        _base_blocks[seed] = block
        return block


def resource_bytes(seed, start, end):
    """Yields the resource's bytes [start, end) in pieces of at most 64 KiB."""
    base = base_block(seed)
    offset = start
    while offset < end:
        chunk = offset // BLOCK
        rotation = (chunk * 7919) % BLOCK
        within = offset % BLOCK
        take = min(BLOCK - within, end - offset)
        begin = (within + rotation) % BLOCK
        if begin + take <= BLOCK:
            yield base[begin:begin + take]
        else:
            yield base[begin:] + base[:take - (BLOCK - begin)]
        offset += take


def resource_sha256(size, seed):
    key = (size, seed)
    digest = _sha_cache.get(key)
    if digest is None:
        hasher = hashlib.sha256()
        for piece in resource_bytes(seed, 0, size):
            hasher.update(piece)
        digest = hasher.hexdigest()
        _sha_cache[key] = digest
    return digest


def parse_range(header, size):
    """Returns (start, end_exclusive), 'unsatisfiable', or None (no usable single range)."""
    if not header or not header.startswith("bytes="):
        return None
    spec = header[len("bytes="):].strip()
    if "," in spec:
        return None
    first, _, last = spec.partition("-")
    try:
        if first == "":
            suffix = int(last)
            if suffix <= 0:
                return "unsatisfiable"
            return (max(0, size - suffix), size)
        start = int(first)
        end = int(last) + 1 if last else size
    except ValueError:
        return None
    if start >= size:
        return "unsatisfiable"
    if end <= start:
        return None
    return (start, min(end, size))


class ClientGone(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ServerAPIKitFaults/1.0"

    def setup(self):
        global _connections
        super().setup()
        with _connections_lock:
            _connections += 1

    def log_message(self, format, *args):
        if self.server.verbose:
            sys.stderr.write("%s - %s\n" % (self.address_string(), format % args))

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ConnectionError, ClientGone, socket.timeout, OSError):
            self.close_connection = True

    # Dispatch

    def do_GET(self):
        self.dispatch()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_PROPFIND = do_GET

    def dispatch(self):
        parts = urlsplit(self.path)
        self.route = parts.path
        self.query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.raw_query = parts.query
        path = self.route
        if path in ("/echo", "/upload-sink"):
            return self.echo(keep_body=(path == "/echo"))
        self.drain_body()
        routes = {
            "/health": lambda: self.send_text(200, "ok"),
            "/resource": self.resource,
            "/resource/norange": lambda: self.resource(ignore_range=True),
            "/resource/416": self.always_416,
            "/resource/sha256": self.resource_digest,
            "/close-mid-body": self.close_mid_body,
            "/wrong-length": self.wrong_length,
            "/huge-length": self.huge_length,
            "/hang": self.hang,
            "/hang-body": self.hang_body,
            "/drip": self.drip,
            "/redirect-loop": lambda: self.redirect("/redirect-loop"),
            "/redirect-cross-host": self.redirect_cross_host,
            "/redirect-to": lambda: self.redirect(self.query.get("url", "/headers"),
                                                  int(self.query.get("status", "302"))),
            "/headers": self.echo_headers,
            "/gzip": self.gzip,
            "/connections": lambda: self.send_json(200, {"accepted": _connections}),
            "/barrier": self.barrier,
        }
        if path in routes:
            return routes[path]()
        if path.startswith("/redirect-chain/"):
            return self.redirect_chain(path[len("/redirect-chain/"):])
        if path.startswith("/resource/error/"):
            return self.error_status(path[len("/resource/error/"):], download=True)
        if path.startswith("/status/"):
            return self.error_status(path[len("/status/"):], download=False)
        self.send_text(404, "no route %s\n" % path)

    # Helpers

    def int_arg(self, name, default):
        try:
            return int(self.query.get(name, default))
        except ValueError:
            return default

    def send_text(self, status, text, headers=()):
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status, value, headers=()):
        body = json.dumps(value, indent=2, sort_keys=True).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body_chunks(self):
        """Yields the request body as it arrives (Content-Length or chunked), 64 KiB at a time."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    raise ClientGone()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return
                remaining = size
                while remaining:
                    piece = self.rfile.read(min(remaining, BLOCK))
                    if not piece:
                        raise ClientGone()
                    remaining -= len(piece)
                    yield piece
                self.rfile.readline(3)
        else:
            remaining = int(self.headers.get("Content-Length") or 0)
            while remaining > 0:
                piece = self.rfile.read(min(remaining, BLOCK))
                if not piece:
                    raise ClientGone()
                remaining -= len(piece)
                yield piece

    def drain_body(self):
        for _ in self.body_chunks():
            pass

    def header_pairs(self):
        return [[name, value] for name, value in self.headers.items()]

    def close_now(self):
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def wait_for_client_to_leave(self):
        """Blocks until the peer closes its side (or HANG_LIMIT_SECONDS pass)."""
        deadline = time.monotonic() + HANG_LIMIT_SECONDS
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.5)
            if readable:
                try:
                    if not self.connection.recv(65536):
                        break
                except OSError:
                    break
        self.close_connection = True

    # Routes

    def resource(self, ignore_range=False):
        size = max(0, self.int_arg("size", 1024))
        seed = self.int_arg("seed", 1)
        drop_after = self.int_arg("drop_after", -1)
        stall_after = self.int_arg("stall_after", -1)
        rate = self.int_arg("rate", 0)
        chunked = self.query.get("chunked") == "1"
        ignore_range = ignore_range or self.query.get("ignore_range") == "1"
        etag = self.query.get("etag") or '"r-%d-%d"' % (size, seed)
        start, end, status = 0, size, 200
        if not ignore_range:
            requested = parse_range(self.headers.get("Range"), size)
            if_range = self.headers.get("If-Range")
            if requested is not None and if_range and if_range not in (etag, LAST_MODIFIED):
                requested = None  # the validator does not match: send the whole, current resource
            if requested == "unsatisfiable":
                return self.send_text(416, "range not satisfiable\n", [("Content-Range", "bytes */%d" % size)])
            if requested is not None:
                start, end = requested
                status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if not chunked:
            self.send_header("Content-Length", str(end - start))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        if not ignore_range:
            self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", LAST_MODIFIED)
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, size))
        self.end_headers()
        if self.command == "HEAD":
            return
        offset = start
        for piece in resource_bytes(seed, start, end):
            if start < drop_after < offset + len(piece):
                keep = max(0, drop_after - offset)
                if keep:
                    self.write_piece(piece[:keep], chunked)
                return self.close_now()
            if start < stall_after < offset + len(piece):
                keep = max(0, stall_after - offset)
                if keep:
                    self.write_piece(piece[:keep], chunked)
                self.wfile.flush()
                return self.wait_for_client_to_leave()
            self.write_piece(piece, chunked)
            offset += len(piece)
            if rate > 0:
                time.sleep(len(piece) / rate)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def write_piece(self, piece, chunked):
        if chunked:
            self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
        else:
            self.wfile.write(piece)

    def always_416(self):
        size = max(0, self.int_arg("size", 1024))
        self.send_text(416, "range not satisfiable\n", [("Content-Range", "bytes */%d" % size)])

    def resource_digest(self):
        size = max(0, self.int_arg("size", 1024))
        self.send_text(200, resource_sha256(size, self.int_arg("seed", 1)))

    def error_status(self, code_text, download):
        try:
            code = int(code_text)
        except ValueError:
            return self.send_text(400, "bad status %r\n" % code_text)
        text = ("error %d: this body must never be written into a download file\n" % code) if download \
            else "status %d\n" % code
        if code < 200 or code in (204, 304):
            # These statuses carry no body by definition.
            self.send_response(code)
            self.end_headers()
            return
        size = self.int_arg("size", -1)
        if size >= 0:
            text = (text * (size // len(text) + 1))[:size]
        self.send_text(code, text)

    def barrier(self):
        n = max(1, self.int_arg("n", 2))
        key = self.query.get("key", "")
        deadline = time.monotonic() + BARRIER_LIMIT_SECONDS
        with _barrier_condition:
            _barrier_arrivals[key] = _barrier_arrivals.get(key, 0) + 1
            _barrier_condition.notify_all()
            while _barrier_arrivals[key] < n:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                _barrier_condition.wait(remaining)
            arrived = _barrier_arrivals[key]
        self.send_json(200 if arrived >= n else 504, {"arrived": arrived, "n": n})

    def close_mid_body(self):
        size = max(1, self.int_arg("size", 100000))
        after = min(size - 1, max(0, self.int_arg("after", size // 2)))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        for piece in resource_bytes(1, 0, after):
            self.wfile.write(piece)
        self.close_now()

    def wrong_length(self):
        size = max(0, self.int_arg("size", 1000))
        extra = max(1, self.int_arg("extra", 100))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size + extra))
        self.end_headers()
        for piece in resource_bytes(1, 0, size):
            self.wfile.write(piece)
        self.close_now()

    def huge_length(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", "2000000000")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(b"tiny")
        self.close_now()

    def hang(self):
        self.wait_for_client_to_leave()

    def hang_body(self):
        size = max(1, self.int_arg("size", 100000))
        after = min(size - 1, max(0, self.int_arg("after", 1000)))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        for piece in resource_bytes(1, 0, after):
            self.wfile.write(piece)
        self.wait_for_client_to_leave()

    def drip(self):
        size = max(0, self.int_arg("size", 10))
        interval = max(0, self.int_arg("interval_ms", 100)) / 1000.0
        chunk = max(1, self.int_arg("chunk", 1))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        sent = 0
        for piece in resource_bytes(1, 0, size):
            view = memoryview(piece)
            while view:
                self.wfile.write(view[:chunk])
                sent += len(view[:chunk])
                view = view[chunk:]
                if sent < size:
                    time.sleep(interval)

    def redirect(self, location, status=302):
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def redirect_chain(self, count_text):
        try:
            count = int(count_text)
        except ValueError:
            return self.send_text(400, "bad count\n")
        if count <= 0:
            return self.echo_headers()
        self.redirect("/redirect-chain/%d" % (count - 1))

    def redirect_cross_host(self):
        host = self.headers.get("Host", "127.0.0.1")
        name, _, port = host.rpartition(":")
        if not name:
            name, port = host, str(self.server.server_address[1])
        other = "localhost" if name == "127.0.0.1" else "127.0.0.1"
        path = self.query.get("path", "/headers")
        self.redirect("http://%s:%s%s" % (other, port, path))

    def echo_headers(self):
        self.send_json(200, {
            "method": self.command,
            "path": self.route,
            "query": self.raw_query,
            "headers": self.header_pairs(),
        })

    def echo(self, keep_body):
        hasher = hashlib.sha256()
        length = 0
        kept = bytearray() if keep_body else None
        # Optional: hash only bytes [range_start, range_start + range_length) (a multipart file part),
        # and keep the first keep_head / last keep_tail bytes (its framing).
        range_start = self.int_arg("range_start", -1)
        range_end = range_start + self.int_arg("range_length", 0)
        range_hasher = hashlib.sha256() if range_start >= 0 else None
        keep_head = self.int_arg("keep_head", 0)
        keep_tail = self.int_arg("keep_tail", 0)
        head = bytearray()
        tail = bytearray()
        for piece in self.body_chunks():
            hasher.update(piece)
            if range_hasher is not None:
                lower = max(range_start, length)
                upper = min(range_end, length + len(piece))
                if lower < upper:
                    range_hasher.update(piece[lower - length:upper - length])
            length += len(piece)
            if len(head) < keep_head:
                head += piece[:keep_head - len(head)]
            if keep_tail:
                tail = (tail + piece)[-keep_tail:]
            if kept is not None:
                if len(kept) + len(piece) <= ECHO_BODY_LIMIT:
                    kept += piece
                else:
                    kept = None
        answer = {
            "method": self.command,
            "path": self.route,
            "query": self.raw_query,
            "headers": self.header_pairs(),
            "length": length,
            "sha256": hasher.hexdigest(),
            "chunked": self.headers.get("Transfer-Encoding", "").lower() == "chunked",
            "content_length_header": self.headers.get("Content-Length"),
        }
        if range_hasher is not None:
            answer["range_sha256"] = range_hasher.hexdigest()
        if keep_head:
            answer["head_base64"] = base64.b64encode(bytes(head)).decode("ascii")
        if keep_tail:
            answer["tail_base64"] = base64.b64encode(bytes(tail)).decode("ascii")
        if keep_body:
            answer["body_base64"] = base64.b64encode(bytes(kept)).decode("ascii") if kept is not None else None
        self.send_json(200, answer)

    def gzip(self):
        payload = json.dumps({"gzipped": True, "method": self.command, "padding": "z" * 2000}).encode("utf-8")
        body = gzip.compress(payload)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once in the concurrency tests: the default backlog of 5 drops SYNs.
    request_queue_size = 1024
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    server = Server((args.host, args.port), Handler)
    server.verbose = args.verbose
    port = server.server_address[1]
    if args.port_file:
        temporary = args.port_file + ".tmp"
        with open(temporary, "w") as handle:
            handle.write("%d\n" % port)
        os.replace(temporary, args.port_file)
    print("fault server listening on http://%s:%d" % (args.host, port), flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
