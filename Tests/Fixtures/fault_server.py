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
        &disposition=VALUE         send this Content-Disposition
        &content_type=VALUE        send this Content-Type instead of application/octet-stream
  /resource/norange?size=N         the resource, ignoring Range (always 200 full body)
  /resource/416?size=N             always 416 with Content-Range: bytes */N
  /resource/sha256?size=N&seed=S   the hex SHA-256 of the resource (text)
  /resource/error/CODE             status CODE with a text body (a download must never write it)
        ?size=N                    the text repeated to exactly N bytes
  /close-mid-body?size=N&after=K   Content-Length N, sends K bytes, closes
  /wrong-length?size=N&extra=M     Content-Length N+M, sends N bytes, closes
  /huge-length                     Content-Length: 2000000000 on a tiny body, then closes
  /hang                            reads the request, never answers, until the client goes away
        &key=K                     record it: /hang/state?key=K answers {"arrived": true, "client_left": ...}
  /hang-once?key=K                 the first request with key K hangs as /hang (its state in /hang/state);
                                   later ones answer 200 at once: one slow replica
  /sometimes-slow?percent=P&delay_ms=D  200 "ok", P % of them (at random) after D ms: one slow replica
  /load?base_ms=B&knee=K           200 "ok" after B × (1 + (N/K)²) ms, N the requests to /load in flight:
                                   an upstream whose throughput peaks at K in flight and falls past it
  /hang-body?size=N&after=K        sends the head and K bytes, then stalls until the client goes away
  /drip?size=N&interval_ms=M&chunk=C  N bytes, C at a time, M ms apart
  /redirect-loop                   302 to itself
  /redirect-chain/N                302 to /redirect-chain/N-1; /redirect-chain/0 echoes headers
  /redirect-cross-host?path=P      302 to the same port on the other loopback name
                                   (127.0.0.1 <-> localhost), path P (default /headers)
  /redirect-to?url=U&status=302    redirect to U
  /headers                         JSON: method, path, query and the headers in order (repeats kept)
  /anything/ANY?QUERY              as /headers, for any path under /anything: the path and query exactly
                                   as they arrived (still percent-encoded)
  /endless?type=T&stop_after=N     200 with no length (chunked), T as its Content-Type (default
                                   application/octet-stream), then 64 KiB chunks of "x" for as long as the
                                   client reads: a server that sends bytes forever; with stop_after, the
                                   body ends properly after the first chunk that reaches N bytes
  /echo (any method)               JSON: method, path, query, headers, body length, SHA-256 and
                                   the body (base64) when at most 16 MiB; reads a Content-Length or a
                                   chunked body: "chunked" (bool) and "content_length_header" (the
                                   Content-Length header as sent, or null) say which it was
  /upload-sink (any method)        reads the body streaming; JSON: length and SHA-256 (and "chunked",
                                   "content_length_header") only
        &range_start=A&range_length=N  also the SHA-256 of body bytes [A, A+N) (a multipart file part)
        &keep_head=K&keep_tail=K   also the first / last K bytes (base64)
  /gzip                            a gzip-encoded JSON body (Content-Encoding: gzip)
  /coding/NAME?size=N&fill=F       N body bytes (F = text: JSON-like lines, compress ~10x, the default;
                                   zero: zero bytes) encoded with NAME = gzip | deflate (zlib-wrapped) |
                                   deflate-raw (raw deflate, sent as "deflate", as some servers do) | br |
                                   zstd | identity | compress (not encoded: an unknown coding) |
                                   gzip-corrupt (not encoded, but sent as "gzip");
                                   Content-Encoding and the encoded Content-Length; X-Decoded-Length and
                                   X-Decoded-SHA256 describe the decoded body. br and zstd need the
                                   venv's brotli / zstandard: without them, 501 saying so
        &chunked=1                 the encoded body chunked, without Content-Length
  /coding/bomb?size=N              N zero bytes (default 10 MiB) gzip-encoded (~10 KB on the wire)
  /coding/file.tar.gz?size=N       a download of an already-compressed file: gzip bytes of N text bytes,
                                   Content-Type application/gzip, no Content-Encoding (kept as they are)
  /coding/encoded.tar.gz?size=N    the same file with Content-Encoding: gzip as well (a misconfigured
                                   server): transports decode it, as the header says
  /status/CODE                     status CODE with a short text body
  /connections                     JSON: connections accepted so far
  /barrier?n=N&key=K               holds each request until N requests with key K have arrived, then
                                   answers them all 200 (JSON: arrived); 504 for a request still
                                   waiting after BARRIER_LIMIT_SECONDS (the calls were not side by side)

The scripted origin of the HTTP caching conformance cases (cache_origin.py says how):

  PUT|DELETE /cache/script?key=K   a case run's script (JSON): the responses of its steps
  ANY /cache/case/K[/...]          the origin, answering the step its Conformance-Step header names
  /cache/log?key=K                 JSON: the requests that reached the origin, with what it sent back

Server-sent events: Content-Type text/event-stream, Cache-Control: no-cache, chunked, one block of
lines per chunk (each sent as written). The events a conforming parser dispatches from each stream
are listed in comments next to SSE_BASIC_CHUNKS and below it.

  /sse/basic                       a fixed stream exercising the parsing rules: a BOM, a comment,
                                   multi-line data, event types, ids, retry, "data:x", "data" alone,
                                   an unknown field, and an unterminated last event (never dispatched)
  /sse/basic/expected              JSON: the events a parser dispatches from /sse/basic, each
                                   {"type", "data", "id", "retry_ms"} (id and retry_ms may be null)
  /sse/lineends?style=lf|crlf|cr   3 events with every line ended by LF, CRLF or a lone CR
  /sse/lineends/expected           JSON: those 3 events (the same for each style)
  /sse/reconnect?key=K             1st request: retry 50, events 1-3, then half of event 4 and the
                                   connection is dropped; 2nd: events 4-5, half of 6, dropped;
                                   3rd and later: 204 No Content
  /sse/reconnect/log?key=K         JSON: {"connections": N, "last_event_ids": [...]}, the Last-Event-ID
                                   each request carried (null when absent)
  /sse/count?n=N&size=S            N events "id: i" / "data: <S letters a-z repeated>" (S default 32),
                                   i = 1...N, written in chunks of about 256 KiB, then the end
  /sse/slow?n=N&interval_ms=M      N events "id: i" / "data: tick i", M ms apart, then the end
        &key=K                     record progress: /sse/slow/state?key=K answers JSON
                                   {"sent": events written, "done": bool, "client_left": bool}
  /sse/malformed?case=C            C = no-blank-line | invalid-utf8 | absurd-retry | long-line
        &size=N                    (long-line) the line's data length, default 2 MiB
  /sse/malformed/expected?case=C&size=N  JSON: the events a parser dispatches from that case
  /sse/status/CODE                 status CODE (no body for 204, "status CODE" text otherwise)
  /sse/completion                  an LLM-style completion stream: a role chunk, the content "Hello, world!"
                                   in fragments as {"choices":[{"delta":{"content":...}}]}, a finish chunk,
                                   then "data: [DONE]"
  /sse/wrong-type                  200, Content-Type: application/json, a body that looks like SSE

Large bodies and backpressure:

  /stream-bytes?size=N&chunk=C&key=K  Content-Length N; byte o is (o % 65536) % 251; written with
                                   sendall C bytes at a time (default 64 KiB, at most 16 MiB); stops
                                   when the client goes away
  /stream-bytes/sent?key=K         JSON: {"sent": body bytes handed to the kernel so far,
                                   "done": bool, "client_left": bool}
  /hold-body?key=K                 200 text/plain, chunked: the chunk "first\n", then nothing until
                                   the client goes away (at most HOLD_BODY_LIMIT_SECONDS, then the
                                   connection is closed with the body unfinished)
  /hold-body/state?key=K           JSON: {"opened": bool, "client_left": bool} (poll it: the server
                                   sees the client leave a moment after the client closes)

The peer suite (the cases of the Swift HTTP client conformance suite, PeerConformanceTests.swift):

  /raw/NAME                        exact bytes, then the connection is closed (no reuse): NAME =
                                   not-http ("FOOBAR"), http-case ("Http/1.1 200 OK"), no-reason
                                   ("HTTP/1.1 200"), 204-with-cl and 304-with-cl (Content-Length: 1000,
                                   no body), incomplete-body (Content-Length: 1000, 4 bytes),
                                   no-length-hint (4 bytes delimited by the close), conflicting-cl
                                   ("Content-Length: 10, 4", 4 bytes); any other NAME: 500
  /peer/request (any method)       JSON {"method", "params": name -> [values], "headers": name as sent ->
                                   [values], "body" (UTF-8 text), "trailers": name -> [values]}: the
                                   request as received, trailer fields of a chunked body included
  /peer/200                        200, empty body
  /peer/404, /peer/999             that status, empty body
  /peer/head-with-cl               HEAD: 200 with Content-Length: 1000 and no body; else 405
  /peer/gzip | deflate | brotli    "TEST\n" in that coding when Accept-Encoding names it, else as it is
  /peer/identity                   "TEST\n", never encoded
  /peer/header-multivalue          X-Test: one and X-Test: two, as two fields
  /peer/301, /peer/308             that redirect to /peer/request
  /peer/redirect-ping, -pong       301 to each other, for ever
  /peer/echo (POST)                chunked 200 at once, then each piece of the request body written
                                   back as it is read (request trailers come back as trailers)
  /peer/speak (POST)               chunked 200, then 1000 times: the chunk "A", and wait for one byte of
                                   the request body; then the end of the response (the request body
                                   is drained afterwards, until the client ends or closes it)
  /peer/1mb-body                   1,000,000 bytes "A"
  /peer/cookie                     Set-Cookie: foo=<a new UUID>; Path=/
  /peer/etag?key=K                 a counter per key, from 0: 200 with ETag and body the counter and
                                   Cached: false, unless If-None-Match carries it: then 304 with ETag and
                                   Cached: true, and the counter moves on for the next request
  /peer/trailers                   chunked "Response body", then the trailer fields X-Trailer-One:
                                   first-value, X-Trailer-Two: second-value, X-Checksum: abc123

A key names one test's record; a new request with the same key starts a new record (except
/sse/reconnect, whose record counts requests). An unknown key answers the empty record.

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
import random
import select
import socket
import sys
import threading
import time
import uuid
import zlib

# Optional codecs (scripts/requirements-test.txt): without them /coding/br and /coding/zstd answer 501.
try:
    import brotli
except ImportError:
    try:
        import brotlicffi as brotli
    except ImportError:
        brotli = None
try:
    import zstandard
except ImportError:
    zstandard = None
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, parse_qsl, urlsplit

import cache_origin

BLOCK = 65536
MASK64 = (1 << 64) - 1
LAST_MODIFIED = formatdate(1_700_000_000, usegmt=True)
ECHO_BODY_LIMIT = 16 * 1024 * 1024
HANG_LIMIT_SECONDS = 300
# Generous: a call that waits this long in vain shows the calls were not side by side; on two busy cores, with the
# whole suite running, 64 calls have taken more than 10 s to arrive.
BARRIER_LIMIT_SECONDS = 30
HOLD_BODY_LIMIT_SECONDS = 60

_base_blocks = {}
_base_lock = threading.Lock()
_sha_cache = {}
_connections = 0
_connections_lock = threading.Lock()
_barrier_arrivals = {}
_barrier_condition = threading.Condition()
# Per-key records of the stateful streaming routes (/sse/reconnect, /stream-bytes, /hold-body, /sse/slow).
_state_lock = threading.Lock()
_sse_reconnects = {}
_stream_bytes = {}
_held_bodies = {}
_slow_streams = {}
# /hang?key=K: whether the request arrived and whether its client has left.
_hangs = {}
# /load: the requests to it in flight.
_load_in_flight = 0
# /peer/etag?key=K: the counter of each key.
_etags = {}

# /raw/NAME: the exact bytes each one writes before closing the connection.
RAW_RESPONSES = {
    "not-http": b"FOOBAR",
    "http-case": b"Http/1.1 200 OK\r\nConnection: close\r\n\r\n",
    "no-reason": b"HTTP/1.1 200\r\nConnection: close\r\n\r\n",
    "204-with-cl": b"HTTP/1.1 204 No Content\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n",
    "304-with-cl": b"HTTP/1.1 304 Not Modified\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n",
    "incomplete-body": b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n1234",
    "no-length-hint": b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n1234",
    "conflicting-cl": b"HTTP/1.1 200 OK\r\nContent-Length: 10, 4\r\nConnection: close\r\n\r\n1234",
    # WebSocket upgrades that prove nothing (RFC 6455 §4.1: the client must fail each), each followed by a text
    # frame "hi" that a client which took the upgrade would read: an accept computed from another key (the RFC's
    # sample), none at all, and a 101 with neither Upgrade nor Connection.
    "ws-wrong-accept": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n\x81\x02hi",
    "ws-no-accept": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
    b"\x81\x02hi",
    "ws-no-upgrade": b"HTTP/1.1 101 Switching Protocols\r\n\r\n\x81\x02hi",
}
RAW_UNKNOWN = b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\n"

# /peer/gzip, /peer/deflate, /peer/brotli: "TEST\n" in each coding (brotli only with the venv's package).
PEER_TEXT = b"TEST\n"
PEER_TRAILERS = [("X-Trailer-One", "first-value"), ("X-Trailer-Two", "second-value"), ("X-Checksum", "abc123")]


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


# Server-sent events (/sse/...).
#
# An expected event is what a WHATWG-conforming EventSource parser dispatches, as the /sse/*/expected
# routes serve it:
#   type      the event type: "message" unless an `event:` field in the same block named another
#   data      the data buffer with its final LF removed
#   id        the last event ID string when the event is dispatched; it persists from event to event
#             until an `id:` field changes it; null when no `id:` field has been seen (lastEventId "")
#   retry_ms  the reconnection time in force when the event is dispatched: the last valid `retry:`
#             value seen so far in the stream (it persists too); null when there has been none
# Unless said otherwise, a stream is written one block (the lines up to and including a blank line)
# per chunk, and ends with the last chunk (a clean end).

# /sse/basic, written one chunk per item. A parser dispatches exactly SSE_BASIC_EXPECTED:
#   1. type "message", data "one",            id "1", retry_ms null
#   2. type "update",  data "line1\nline2",   id "2", retry_ms null
#   3. type "message", data "nospace",        id "2", retry_ms 1500
#   4. type "message", data "",               id "2", retry_ms 1500
#   5. type "message", data "after-unknown",  id "2", retry_ms 1500
# The BOM comes right before `id: 1`: a parser that keeps it reads a field named "\ufeffid", ignores
# it, and event 1 then has no id. The comment `: hello` is ignored; the block with only `retry:` sets
# the reconnection time and dispatches nothing; `data: dropped` is never followed by a blank line
# before the end of the stream, so it is never dispatched.
SSE_BASIC_CHUNKS = [
    b"\xef\xbb\xbfid: 1\n: hello\ndata: one\n\n",
    b"event: update\ndata: line1\ndata: line2\nid: 2\n\n",
    b"retry: 1500\n\n",
    b"data:nospace\n\n",
    b"data\n\n",
    b"foo: this unknown field is ignored\ndata: after-unknown\n\n",
    b"data: dropped\n",
]


def sse_event(data, type="message", id=None, retry_ms=None):
    return {"type": type, "data": data, "id": id, "retry_ms": retry_ms}


SSE_BASIC_EXPECTED = [
    sse_event("one", id="1"),
    sse_event("line1\nline2", type="update", id="2"),
    sse_event("nospace", id="2", retry_ms=1500),
    sse_event("", id="2", retry_ms=1500),
    sse_event("after-unknown", id="2", retry_ms=1500),
]

# /sse/lineends?style=lf|crlf|cr: these blocks with every "\n" written as LF, CRLF or a lone CR.
# With style=crlf each block is written as two chunks split between its first CR and LF, 10 ms apart
# (a CRLF may straddle two reads). Every style dispatches exactly SSE_LINEENDS_EXPECTED:
#   1. type "message", data "alpha",         id "a", retry_ms null
#   2. type "beta",    data "beta1\nbeta2",  id "a", retry_ms null
#   3. type "message", data "gamma",         id "c", retry_ms 2000
SSE_LINEENDS_BLOCKS = [
    "id: a\ndata: alpha\n\n",
    ": a comment\nevent: beta\ndata: beta1\ndata: beta2\n\n",
    "retry: 2000\nid: c\ndata: gamma\n\n",
]
SSE_LINE_ENDS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
SSE_LINEENDS_EXPECTED = [
    sse_event("alpha", id="a"),
    sse_event("beta1\nbeta2", type="beta", id="a"),
    sse_event("gamma", id="c", retry_ms=2000),
]

# /sse/reconnect?key=K, one request after another with the same key:
#   1st: "retry: 50\nid: 1\ndata: event 1\n\n", then events 2 and 3 ("id: N\ndata: event N\n\n"),
#        then half of event 4 ("id: 4\ndata: ev") and the connection is dropped (no last chunk)
#   2nd: events 4 and 5, then half of event 6, dropped the same way
#   3rd and later: 204 No Content (an EventSource stops)
# An EventSource that reconnects dispatches event 1..5: type "message", data "event N", id "N",
# retry_ms 50; the 2nd request should carry Last-Event-ID: 3 and the 3rd Last-Event-ID: 5.
SSE_RECONNECT_PLAN = {1: (1, 3), 2: (4, 5)}
SSE_RECONNECT_RETRY_MS = 50

# /sse/malformed?case=...: what each case writes, and what a parser dispatches.
#   no-blank-line  "data: before\n\n", then "data: never\ndata: dispatched\n" and the end:
#                  1 event: "before"
#   invalid-utf8   b"data: bad\xff\xfebytes\n\n", then "data: after\n\n": 2 events, the first's data
#                  "bad\ufffd\ufffdbytes" (each invalid byte decodes to U+FFFD), then "after"
#   absurd-retry   "retry: 1000\ndata: first\n\n"                     -> "first",  retry_ms 1000
#                  "retry: -5\nretry: abc\nretry: 12x\ndata: second\n\n" -> "second", retry_ms 1000
#                  (a value that is not all ASCII digits is ignored)
#                  "retry: 99999999999999999999999\ndata: normal\n\n"  -> "normal"; the value is all
#                  digits, so the specification takes it, but it fits no 64-bit integer: a parser may
#                  ignore it (retry_ms stays 1000) or clamp it. /sse/malformed/expected gives 1000 and
#                  marks that event with "retry_ms_may_be_clamped": true.
#   long-line      "data: " and then size bytes (default 2 MiB) of the letters a-z repeated, written
#                  64 KiB per chunk with no line end, then "\n\n" and "data: after\n\n": 2 events, the
#                  first's data the size letters, then "after"
# No event of these cases has an id.
SSE_MALFORMED_CASES = ("no-blank-line", "invalid-utf8", "absurd-retry", "long-line")
SSE_LONG_LINE_DEFAULT = 2 * 1024 * 1024
SSE_ABSURD_RETRY = b"99999999999999999999999"
ALPHABET = b"abcdefghijklmnopqrstuvwxyz"


def letters(count):
    """`count` bytes of the letters a-z repeated (the data of /sse/count and the long line)."""
    return (ALPHABET * (count // len(ALPHABET) + 1))[:count]


def sse_malformed_expected(case, size):
    if case == "no-blank-line":
        return [sse_event("before")]
    if case == "invalid-utf8":
        return [sse_event("bad\ufffd\ufffdbytes"), sse_event("after")]
    if case == "absurd-retry":
        last = sse_event("normal", retry_ms=1000)
        last["retry_ms_may_be_clamped"] = True
        return [sse_event("first", retry_ms=1000), sse_event("second", retry_ms=1000), last]
    if case == "long-line":
        return [sse_event(letters(size).decode("ascii")), sse_event("after")]
    return None


# /stream-bytes: byte o of the body is (o % 65536) % 251, whatever the chunk size. The pattern buffer
# is the 64 KiB block repeated to chunk + 64 KiB bytes, so each write is a slice of it (no copying).
STREAM_BLOCK = bytes(i % 251 for i in range(BLOCK))
STREAM_CHUNK_LIMIT = 16 * 1024 * 1024
_stream_patterns = {}


def stream_pattern(chunk):
    with _base_lock:
        pattern = _stream_patterns.get(chunk)
        if pattern is None:
            if len(_stream_patterns) > 8:
                _stream_patterns.clear()
            pattern = STREAM_BLOCK * ((chunk + BLOCK - 1) // BLOCK + 1)
            _stream_patterns[chunk] = pattern
        return pattern


class ClientGone(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A response is written in two or more segments (the head, then the body): with Nagle's algorithm the
    # second waits for the client's delayed ACK of the first, 40 ms on Linux, on every keep-alive request.
    disable_nagle_algorithm = True
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
        if path.startswith("/raw/"):
            return self.raw(path[len("/raw/"):])
        if path.startswith("/cache/") and cache_origin.handle(self, path):
            return
        if path in ("/peer/request", "/peer/echo", "/peer/speak"):
            return {"/peer/request": self.peer_request, "/peer/echo": self.peer_echo,
                    "/peer/speak": self.peer_speak}[path]()
        self.drain_body()
        if path.startswith("/hostile/"):
            return hostile(self, path[len("/hostile/"):])
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
            "/hang/state": lambda: self.send_state(_hangs, {"arrived": False, "client_left": False}),
            "/hang-once": self.hang_once,
            "/sometimes-slow": self.sometimes_slow,
            "/load": self.load,
            "/hang-body": self.hang_body,
            "/drip": self.drip,
            "/redirect-loop": lambda: self.redirect("/redirect-loop"),
            "/redirect-cross-host": self.redirect_cross_host,
            "/redirect-to": lambda: self.redirect(self.query.get("url", "/headers"),
                                                  int(self.query.get("status", "302"))),
            "/headers": self.echo_headers,
            "/endless": self.endless,
            "/gzip": self.gzip,
            "/coding/bomb": lambda: self.coding("gzip", fill="zero", default_size=10 << 20),
            "/coding/file.tar.gz": lambda: self.coding_file(content_encoding=False),
            "/coding/encoded.tar.gz": lambda: self.coding_file(content_encoding=True),
            "/connections": lambda: self.send_json(200, {"accepted": _connections}),
            "/barrier": self.barrier,
            "/sse/basic": self.sse_basic,
            "/sse/basic/expected": lambda: self.send_json(200, SSE_BASIC_EXPECTED),
            "/sse/lineends": self.sse_lineends,
            "/sse/lineends/expected": lambda: self.send_json(200, SSE_LINEENDS_EXPECTED),
            "/sse/reconnect": self.sse_reconnect,
            "/sse/reconnect/log": self.sse_reconnect_log,
            "/sse/count": self.sse_count,
            "/sse/slow": self.sse_slow,
            "/sse/slow/state": lambda: self.send_state(_slow_streams,
                                                       {"sent": 0, "done": False, "client_left": False}),
            "/sse/malformed": self.sse_malformed,
            "/sse/malformed/expected": self.sse_malformed_expected,
            "/sse/wrong-type": self.sse_wrong_type,
            "/sse/completion": self.sse_completion,
            "/stream-bytes": self.stream_bytes,
            "/stream-bytes/sent": lambda: self.send_state(_stream_bytes,
                                                          {"sent": 0, "done": False, "client_left": False}),
            "/hold-body": self.hold_body,
            "/hold-body/state": lambda: self.send_state(_held_bodies, {"opened": False, "client_left": False}),
            "/peer/200": lambda: self.send_empty(200),
            "/peer/404": lambda: self.send_empty(404),
            "/peer/999": lambda: self.send_empty(999),
            "/peer/head-with-cl": self.peer_head_with_cl,
            "/peer/gzip": lambda: self.peer_coded("gzip"),
            "/peer/deflate": lambda: self.peer_coded("deflate"),
            "/peer/brotli": lambda: self.peer_coded("br"),
            "/peer/identity": lambda: self.peer_coded("identity"),
            "/peer/header-multivalue": lambda: self.send_empty(200, [("X-Test", "one"), ("X-Test", "two")]),
            "/peer/301": lambda: self.redirect("/peer/request", 301),
            "/peer/308": lambda: self.redirect("/peer/request", 308),
            "/peer/redirect-ping": lambda: self.redirect("/peer/redirect-pong", 301),
            "/peer/redirect-pong": lambda: self.redirect("/peer/redirect-ping", 301),
            "/peer/1mb-body": lambda: self.send_bytes(200, b"A" * 1_000_000),
            "/peer/cookie": lambda: self.send_empty(200, [("Set-Cookie", "foo=%s; Path=/" % uuid.uuid4())]),
            "/peer/etag": self.peer_etag,
            "/peer/trailers": self.peer_trailers,
        }
        if path in routes:
            return routes[path]()
        if path.startswith("/anything/"):
            return self.echo_headers()
        if path.startswith("/coding/"):
            return self.coding(path[len("/coding/"):])
        if path.startswith("/redirect-chain/"):
            return self.redirect_chain(path[len("/redirect-chain/"):])
        if path.startswith("/resource/error/"):
            return self.error_status(path[len("/resource/error/"):], download=True)
        if path.startswith("/status/"):
            return self.error_status(path[len("/status/"):], download=False)
        if path.startswith("/sse/status/"):
            return self.error_status(path[len("/sse/status/"):], download=False)
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

    def send_state(self, records, absent):
        """Answers the JSON record of the request's `key` in `records`, or `absent` when there is none."""
        with _state_lock:
            answer = dict(records.get(self.query.get("key", ""), absent))
        self.send_json(200, answer)

    def body_chunks(self):
        """Yields the request body as it arrives (Content-Length or chunked), 64 KiB at a time; a chunked
        body's trailer fields end up in `self.request_trailers`."""
        self.request_trailers = []
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    raise ClientGone()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while True:
                        field = self.rfile.readline(65537)
                        if field in (b"\r\n", b"\n", b""):
                            break
                        name, _, value = field.decode("latin-1").partition(":")
                        self.request_trailers.append((name.strip(), value.strip()))
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

    def wait_for_client_to_leave(self, limit=HANG_LIMIT_SECONDS):
        """Blocks until the peer closes its side (or `limit` seconds pass); True when it did."""
        self.close_connection = True
        return self.client_left_within(limit)

    def client_left_within(self, seconds):
        """Waits up to `seconds`, reading (and dropping) whatever the peer sends; True as soon as the
        peer closes its side, False when the time is up with the peer still there."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            readable, _, _ = select.select([self.connection], [], [], min(remaining, 0.5))
            if readable:
                try:
                    if not self.connection.recv(65536):
                        return True
                except OSError:
                    return True

    def begin_chunked(self, content_type, status=200, headers=()):
        """Sends the head of a chunked response; False for HEAD (then the head is the whole answer)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        return self.command != "HEAD"

    def begin_event_stream(self):
        """Sends the head of a server-sent event stream (chunked); False for HEAD."""
        return self.begin_chunked("text/event-stream", headers=[("Cache-Control", "no-cache")])

    def end_chunks(self, trailers=()):
        fields = "".join("%s: %s\r\n" % (name, value) for name, value in trailers)
        self.wfile.write(b"0\r\n" + fields.encode("latin-1") + b"\r\n")

    def send_bytes(self, status, body, headers=()):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_empty(self, status, headers=()):
        self.send_bytes(status, b"", headers)

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
        self.send_header("Content-Type", self.query.get("content_type") or "application/octet-stream")
        if self.query.get("disposition"):
            self.send_header("Content-Disposition", self.query["disposition"])
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
        key = self.query.get("key")
        if key:
            with _state_lock:
                _hangs[key] = {"arrived": True, "client_left": False}
        self.wait_for_client_to_leave()
        if key:
            with _state_lock:
                _hangs[key]["client_left"] = True

    def sometimes_slow(self):
        percent = float(self.query.get("percent", "2"))
        if random.random() * 100 < percent:
            time.sleep(max(0, self.int_arg("delay_ms", 1000)) / 1000)
        self.send_text(200, "ok\n")

    def load(self):
        global _load_in_flight
        with _state_lock:
            _load_in_flight += 1
            in_flight = _load_in_flight
        try:
            knee = max(1, self.int_arg("knee", 8))
            time.sleep(max(0, self.int_arg("base_ms", 10)) * (1 + (in_flight / knee) ** 2) / 1000)
            self.send_text(200, "ok\n")
        finally:
            with _state_lock:
                _load_in_flight -= 1

    def hang_once(self):
        """The first request with a key hangs as /hang (recorded in /hang/state); later ones answer 200 at
        once: one slow replica, for hedged requests."""
        key = self.query.get("key", "")
        with _state_lock:
            first = key not in _hangs
            if first:
                _hangs[key] = {"arrived": True, "client_left": False}
        if not first:
            return self.send_text(200, "fast\n")
        self.wait_for_client_to_leave()
        with _state_lock:
            _hangs[key]["client_left"] = True

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

    def endless(self):
        if not self.begin_chunked(self.query.get("type", "application/octet-stream")):
            return
        piece = b"x" * 65536
        stop_after = self.int_arg("stop_after", -1)
        sent = 0
        try:
            while stop_after < 0 or sent < stop_after:
                self.write_piece(piece, True)
                sent += len(piece)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

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

    # The peer suite (see the module's documentation)

    def raw(self, name):
        self.drain_body()
        self.wfile.write(RAW_RESPONSES.get(name, RAW_UNKNOWN))
        self.close_now()

    def peer_request(self):
        body = b"".join(self.body_chunks())
        params = {}
        for name, value in parse_qsl(self.raw_query, keep_blank_values=True):
            params.setdefault(name, []).append(value)
        headers = {}
        for name, value in self.headers.items():
            headers.setdefault(name, []).append(value)
        trailers = {}
        for name, value in self.request_trailers:
            trailers.setdefault(name, []).append(value)
        self.send_json(200, {
            "method": self.command,
            "params": params,
            "headers": headers,
            "body": body.decode("utf-8", "replace"),
            "trailers": trailers,
        })

    def peer_head_with_cl(self):
        if self.command != "HEAD":
            return self.send_empty(405)
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()

    def peer_coded(self, coding):
        accepted = [part.split(";")[0].strip() for part in self.headers.get("Accept-Encoding", "").split(",")]
        if coding == "identity" or coding not in accepted or (coding == "br" and brotli is None):
            return self.send_bytes(200, PEER_TEXT)
        if coding == "gzip":
            body = gzip.compress(PEER_TEXT)
        elif coding == "deflate":
            body = zlib.compress(PEER_TEXT)
        else:
            body = brotli.compress(PEER_TEXT)
        self.send_bytes(200, body, [("Content-Encoding", coding)])

    def peer_echo(self):
        if self.command != "POST":
            self.drain_body()
            return self.send_empty(405)
        if not self.begin_chunked("application/octet-stream"):
            return
        for piece in self.body_chunks():
            self.write_piece(piece, True)
        self.end_chunks(self.request_trailers)

    def peer_speak(self):
        if self.command != "POST":
            self.drain_body()
            return self.send_empty(405)
        self.begin_chunked("text/plain")
        pieces = self.body_chunks()
        received = 0
        for sent in range(1, 1001):
            self.write_piece(b"A", True)
            # The byte echoed back (or more, should the client have joined some) before the next chunk.
            while received < sent:
                piece = next(pieces, b"")
                if not piece:
                    raise ClientGone()
                received += len(piece)
        self.end_chunks()
        # The client ends its body once it has read the end of the response (or drops it).
        for _ in pieces:
            pass

    def peer_etag(self):
        key = self.query.get("key", "")
        with _state_lock:
            current = _etags.get(key, 0)
            matched = self.headers.get("If-None-Match", "").strip('"W/ ') == str(current)
            if matched:
                _etags[key] = current + 1
        if matched:
            return self.send_empty(304, [("ETag", str(current)), ("Cached", "true")])
        self.send_bytes(200, str(current).encode("ascii"), [("ETag", str(current)), ("Cached", "false")])

    def peer_trailers(self):
        if not self.begin_chunked("text/plain", headers=[("Trailer", ", ".join(n for n, _ in PEER_TRAILERS))]):
            return
        self.write_piece(b"Response body", True)
        self.end_chunks(PEER_TRAILERS)

    # Server-sent events (see SSE_BASIC_CHUNKS and the comments around it)

    def sse_basic(self):
        if not self.begin_event_stream():
            return
        for chunk in SSE_BASIC_CHUNKS:
            self.write_piece(chunk, True)
        self.end_chunks()

    def sse_lineends(self):
        style = self.query.get("style", "lf")
        ending = SSE_LINE_ENDS.get(style)
        if ending is None:
            return self.send_text(400, "style must be lf, crlf or cr\n")
        if not self.begin_event_stream():
            return
        for block in SSE_LINEENDS_BLOCKS:
            data = block.replace("\n", ending).encode("utf-8")
            if style == "crlf":
                split = data.index(b"\r") + 1
                self.write_piece(data[:split], True)
                time.sleep(0.01)
                data = data[split:]
            self.write_piece(data, True)
        self.end_chunks()

    def sse_reconnect(self):
        key = self.query.get("key", "")
        with _state_lock:
            record = _sse_reconnects.setdefault(key, {"connections": 0, "last_event_ids": []})
            record["connections"] += 1
            record["last_event_ids"].append(self.headers.get("Last-Event-ID"))
            number = record["connections"]
        plan = SSE_RECONNECT_PLAN.get(number)
        if plan is None:
            self.send_response(204)
            self.end_headers()
            return
        if not self.begin_event_stream():
            return
        first, last = plan
        for n in range(first, last + 1):
            retry = b"retry: %d\n" % SSE_RECONNECT_RETRY_MS if n == 1 else b""
            self.write_piece(retry + b"id: %d\ndata: event %d\n\n" % (n, n), True)
        self.write_piece(b"id: %d\ndata: ev" % (last + 1), True)
        self.close_now()

    def sse_reconnect_log(self):
        with _state_lock:
            record = _sse_reconnects.get(self.query.get("key", ""), {"connections": 0, "last_event_ids": []})
            answer = {"connections": record["connections"], "last_event_ids": list(record["last_event_ids"])}
        self.send_json(200, answer)

    def sse_count(self):
        n = max(0, self.int_arg("n", 1000))
        size = max(0, self.int_arg("size", 32))
        if not self.begin_event_stream():
            return
        # Event i is "id: i\ndata: <size letters>\n\n". A batch of events is built with one join
        # (the ids are the only part that changes) and written as one chunk of about 256 KiB.
        tail = "\ndata: " + letters(size).decode("ascii") + "\n\n"
        glue = tail + "id: "
        per_chunk = max(1, (256 * 1024) // (len(tail) + 10))
        first = 1
        while first <= n:
            last = min(n, first + per_chunk - 1)
            text = "id: " + glue.join(map(str, range(first, last + 1))) + tail
            self.write_piece(text.encode("ascii"), True)
            first = last + 1
        self.end_chunks()

    def sse_slow(self):
        n = max(0, self.int_arg("n", 5))
        interval = max(0, self.int_arg("interval_ms", 200)) / 1000.0
        key = self.query.get("key")
        record = {"sent": 0, "done": False, "client_left": False}
        if key is not None:
            with _state_lock:
                _slow_streams[key] = record
        if not self.begin_event_stream():
            return
        try:
            for i in range(1, n + 1):
                self.write_piece(b"id: %d\ndata: tick %d\n\n" % (i, i), True)
                with _state_lock:
                    record["sent"] = i
                if i < n and self.client_left_within(interval):
                    raise ClientGone()
            self.end_chunks()
            with _state_lock:
                record["done"] = True
        except (ClientGone, OSError):
            with _state_lock:
                record["client_left"] = True
            self.close_connection = True

    def sse_malformed(self):
        case = self.query.get("case", "")
        size = max(0, self.int_arg("size", SSE_LONG_LINE_DEFAULT))
        if case not in SSE_MALFORMED_CASES:
            return self.send_text(400, "case must be one of %s\n" % ", ".join(SSE_MALFORMED_CASES))
        if not self.begin_event_stream():
            return
        if case == "no-blank-line":
            self.write_piece(b"data: before\n\n", True)
            self.write_piece(b"data: never\ndata: dispatched\n", True)
        elif case == "invalid-utf8":
            self.write_piece(b"data: bad\xff\xfebytes\n\n", True)
            self.write_piece(b"data: after\n\n", True)
        elif case == "absurd-retry":
            self.write_piece(b"retry: 1000\ndata: first\n\n", True)
            self.write_piece(b"retry: -5\nretry: abc\nretry: 12x\ndata: second\n\n", True)
            self.write_piece(b"retry: " + SSE_ABSURD_RETRY + b"\ndata: normal\n\n", True)
        else:
            self.write_piece(b"data: ", True)
            line = memoryview(letters(size))
            for start in range(0, size, BLOCK):
                self.write_piece(line[start:start + BLOCK], True)
            self.write_piece(b"\n\ndata: after\n\n", True)
        self.end_chunks()

    def sse_malformed_expected(self):
        case = self.query.get("case", "")
        expected = sse_malformed_expected(case, max(0, self.int_arg("size", SSE_LONG_LINE_DEFAULT)))
        if expected is None:
            return self.send_text(400, "case must be one of %s\n" % ", ".join(SSE_MALFORMED_CASES))
        self.send_json(200, expected)

    def sse_completion(self):
        if not self.begin_event_stream():
            return
        deltas = [{"role": "assistant"}] + [{"content": part} for part in ["Hel", "lo", ", wor", "ld", "!"]]
        for delta in deltas:
            chunk = {"id": "cmpl-1", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            self.write_piece(("data: %s\n\n" % json.dumps(chunk)).encode("utf-8"), True)
        done = {"id": "cmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.write_piece(("data: %s\n\n" % json.dumps(done)).encode("utf-8"), True)
        self.write_piece(b"data: [DONE]\n\n", True)
        self.end_chunks()

    def sse_wrong_type(self):
        body = b"id: 1\ndata: this is not an event stream\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    # Large bodies and backpressure

    def stream_bytes(self):
        size = max(0, self.int_arg("size", 1024))
        chunk = min(STREAM_CHUNK_LIMIT, max(1, self.int_arg("chunk", BLOCK)))
        record = {"sent": 0, "done": False, "client_left": False}
        with _state_lock:
            _stream_bytes[self.query.get("key", "")] = record
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if self.command == "HEAD":
            return
        view = memoryview(stream_pattern(chunk))
        sent = 0
        try:
            while sent < size:
                take = min(chunk, size - sent)
                start = sent % BLOCK
                self.connection.sendall(view[start:start + take])
                sent += take
                with _state_lock:
                    record["sent"] = sent
            with _state_lock:
                record["done"] = True
        except OSError:
            with _state_lock:
                record["client_left"] = True
            self.close_connection = True

    def hold_body(self):
        record = {"opened": True, "client_left": False}
        with _state_lock:
            _held_bodies[self.query.get("key", "")] = record
        if not self.begin_chunked("text/plain"):
            return
        self.write_piece(b"first\n", True)
        left = self.wait_for_client_to_leave(HOLD_BODY_LIMIT_SECONDS)
        with _state_lock:
            record["client_left"] = left

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

    def coding(self, name, fill=None, default_size=64 << 10):
        size = self.int_arg("size", default_size)
        plain = coding_plain(size, fill or self.query.get("fill", "text"))
        try:
            body, header = coding_encode(name, plain)
        except LookupError as missing:
            return self.send_text(501 if str(missing) else 404, (str(missing) or "no coding %s" % name) + "\n")
        chunked = self.query.get("chunked") == "1"
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream" if fill == "zero" else "text/plain")
        if header:
            self.send_header("Content-Encoding", header)
        self.send_header("X-Decoded-Length", str(len(plain)))
        self.send_header("X-Decoded-SHA256", hashlib.sha256(plain).hexdigest())
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if not chunked:
            return self.wfile.write(body)
        for start in range(0, len(body), 4096):
            piece = body[start:start + 4096]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")

    def coding_file(self, content_encoding):
        body = gzip.compress(coding_plain(self.int_arg("size", 64 << 10), "text"), mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", "application/gzip")
        if content_encoding:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-File-SHA256", hashlib.sha256(body).hexdigest())
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def coding_plain(size, fill):
    """The decoded body of /coding: zeros, or JSON-like text lines that gzip about 10 times."""
    if fill == "zero":
        return bytes(size)
    lines = []
    total = 0
    index = 0
    while total < size:
        line = ('{"id": %d, "name": "item-%d", "tags": ["alpha", "beta"], "score": %d, "ok": %s}\n'
                % (index, index * 7919 % 100003, index * 31 % 977, "true" if index % 3 else "false")).encode()
        lines.append(line)
        total += len(line)
        index += 1
    return b"".join(lines)[:size]


def coding_encode(name, plain):
    """(encoded body, Content-Encoding) for /coding/NAME; LookupError("why") when the codec is missing,
    LookupError("") for an unknown name."""
    if name == "identity":
        return plain, None
    if name == "gzip":
        return gzip.compress(plain, mtime=0), "gzip"
    if name == "deflate":
        return zlib.compress(plain), "deflate"
    if name == "deflate-raw":
        packer = zlib.compressobj(wbits=-15)
        return packer.compress(plain) + packer.flush(), "deflate"
    if name == "compress":
        return plain, "compress"
    if name == "gzip-corrupt":
        return plain, "gzip"
    if name == "br":
        if brotli is None:
            raise LookupError("br needs the Python package brotli (scripts/requirements-test.txt)")
        return brotli.compress(plain, quality=5), "br"
    if name == "zstd":
        if zstandard is None:
            raise LookupError("zstd needs the Python package zstandard (scripts/requirements-test.txt)")
        return zstandard.ZstdCompressor().compress(plain), "zstd"
    raise LookupError("")


# --- Hostile bytes: terminal escapes where a client may print what the server sent -----------------------------------
# For sapi's terminal tests (Tests/SapiTests/SapiTerminalEscapeTests.swift, which expects these exact bytes): ESC ] 0 ;
# ... BEL sets a terminal's title, ESC [ 2 J clears its screen, U+009B is an 8-bit CSI to some terminals, U+202E
# reverses the text after it, DEL, and a lone CR that lets what follows overwrite the line.
#
#   /hostile/text       200 text/plain: HOSTILE_TEXT as its body, HOSTILE_HEADER as the value of X-Hostile
#   /hostile/json       200 application/json: HOSTILE_JSON, U+009B, U+202E and DEL raw in its strings (valid JSON)
#   /hostile/sse        text/event-stream: one event whose type, id and data carry HOSTILE_HEADER
#   /hostile/redirect   302 to an ftp:// Location carrying HOSTILE_HEADER (a client's error quotes it)
HOSTILE_HEADER = "\x1b]0;PWNED\x07\x1b[2J"
HOSTILE_TEXT = "title \x1b]0;PWNED\x07 clear \x1b[2J csi \u009b2J rlo \u202eevil del \x7f cr \r end\n".encode()
HOSTILE_JSON = '{"csi": "\u009b2J", "escaped": "\\u001b]0;PWNED\\u0007", "rlo": "\u202eevil\x7f"}'.encode()


def hostile(handler, name):
    if name == "text":
        handler.send_bytes(200, HOSTILE_TEXT,
                           [("Content-Type", "text/plain; charset=utf-8"), ("X-Hostile", HOSTILE_HEADER)])
    elif name == "json":
        handler.send_bytes(200, HOSTILE_JSON, [("Content-Type", "application/json")])
    elif name == "sse":
        if handler.begin_event_stream():
            event = "event: %s\nid: %s\ndata: %s\n\n" % ((HOSTILE_HEADER,) * 3)
            handler.write_piece(event.encode(), True)
            handler.end_chunks()
    elif name == "redirect":
        handler.redirect("ftp://example.invalid/" + HOSTILE_HEADER)
    else:
        handler.send_text(404, "no route /hostile/%s\n" % name)
# --- end of the hostile bytes ----------------------------------------------------------------------------------------


# A method that is not a Python name (the caching cases' M-SEARCH, an unsafe extension method).
setattr(Handler, "do_M-SEARCH", Handler.do_GET)


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
