#!/usr/bin/env python3
"""The HTTP/3 peer of ServerAPIKit's conformance tests, on loopback (the `aioquic` package, pinned in
scripts/requirements-test.txt). scripts/test-server.sh starts it with the HTTP/2 front's certificate, so that
SAPI_H2_CA_FILE trusts it too, on two ports the kernel picks, written to the port file in this order:

  1. UDP: HTTP/3 over QUIC (SAPI_H3_URL, https://127.0.0.1:PORT)
  2. TCP: HTTPS/1.1 serving the same paths, each answer carrying `Alt-Svc: h3=":PORT1"`, so that a client that
     honours Alt-Svc takes its later calls to this origin over QUIC (SAPI_H3_ALTSVC_URL); a request whose query
     has `alt_port=N` is announced port N instead (a port where nothing answers: an alternative that fails)

  3. and on: UDP, one per `--proxy HOST:PORT`: HTTP/3 in front of that HTTP/1.1 origin (httpbin, the fault fixture),
     as the nginx front is their HTTP/2 one, so that the conformance suite's cases run over QUIC
     (SAPI_HTTPBIN_H3_URL, SAPI_FIXTURE_H3_URL)

    python3 h3_server.py --port-file /tmp/ports --cert server.pem --key server.key [--proxy 127.0.0.1:8080 …]

The proxy sends each request on a connection of its own (`Connection: close`), streams both bodies (the request's
chunked when it has no length), passes the client's reset on by closing that connection, and relays the origin's
answer field by field, without the hop-by-hop ones. An origin that fails before its head gives 502; after it, the
stream is reset (H3_INTERNAL_ERROR), as a truncated answer. It reads from the origin only while QUIC has taken what
it read (at most 256 KiB waits in a stream's send buffer), so that a client that stops reading stops the origin.

Paths (every answer says which protocol carried it in `X-Protocol`: "h3" or "http/1.1"):

  /get                 200, JSON {"protocol", "method", "path", "headers"}
  /post                200, the request's body echoed (any method with a body)
  /bytes?size=N        200, N bytes (1 MiB by default): byte i is i % 256, sent 64 KiB at a time, with an ETag;
                       `Range: bytes=K-` answers 206 from byte K; `drop_after=M` (without Range) resets the stream
                       (over TCP: closes the connection) after M bytes, for a download to resume
  /flaky?key=K&failures=N  503 for the first N requests with key K (1 by default), then 200 "recovered"
  /etag                200 "validated over PROTOCOL" with `ETag: "h3-v1"` and `Cache-Control: no-cache`; 304 to
                       `If-None-Match: "h3-v1"`
  /slow?n=N&interval_ms=M  200, N chunks of 16 bytes, M ms apart (100 chunks, 100 ms: ten seconds by default),
                       for cancelling a call part-way
  /connections         200, how many QUIC connections the UDP side has accepted, as text
"""

import argparse
import asyncio
import json
import ssl
import urllib.parse

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, H3Event, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, ProtocolNegotiated, QuicEvent, StopSendingReceived, StreamReset

PATTERN = bytes(range(256)) * 256  # 64 KiB
ALT_SVC_MAX_AGE = 3600
quic_connections = 0
flaky_requests = {}  # key -> requests seen


class DropStream(Exception):
    """Raised by a route that ends its answer part-way: the stream is reset (over TCP, the connection closed)."""


def parse_target(target):
    parts = urllib.parse.urlsplit(target)
    return parts.path, dict(urllib.parse.parse_qsl(parts.query))


async def answer(protocol, method, target, headers, body, send_head, send_data):
    """Serves one request through send_head(status, headers) and send_data(bytes, end): the same routes on both
    protocols."""
    path, query = parse_target(target)
    extra = [("x-protocol", protocol)]
    if path == "/get":
        value = {"protocol": protocol, "method": method, "path": target, "headers": headers}
        payload = json.dumps(value).encode()
        await send_head(200, extra + [("content-type", "application/json"), ("content-length", str(len(payload)))])
        await send_data(payload, True)
    elif path == "/post":
        await send_head(200, extra + [("content-type", "application/octet-stream"),
                                      ("content-length", str(len(body)))])
        await send_data(body, True)
    elif path == "/bytes":
        size = int(query.get("size", 1 << 20))
        requested = headers.get("range", "")
        start = int(requested[6:-1]) if requested.startswith("bytes=") and requested.endswith("-") else 0
        drop_after = int(query.get("drop_after", -1)) if not requested else -1
        fields = [("content-type", "application/octet-stream"), ("content-length", str(size - start)),
                  ("etag", f'"bytes-{size}"'), ("accept-ranges", "bytes")]
        if requested:
            fields.append(("content-range", f"bytes {start}-{size - 1}/{size}"))
        await send_head(206 if requested else 200, extra + fields)
        sent = start
        while sent < size:
            end = min(size, sent + len(PATTERN) - sent % len(PATTERN))
            if 0 <= drop_after < end:
                await send_data(PATTERN[sent % len(PATTERN): sent % len(PATTERN) + drop_after - sent], False)
                raise DropStream()
            await send_data(PATTERN[sent % len(PATTERN): sent % len(PATTERN) + end - sent], end == size)
            sent = end
        if start >= size:
            await send_data(b"", True)
    elif path == "/flaky":
        key, failures = query.get("key", ""), int(query.get("failures", 1))
        seen = flaky_requests.get(key, 0)
        flaky_requests[key] = seen + 1
        status, payload = (503, b"unavailable") if seen < failures else (200, b"recovered")
        await send_head(status, extra + [("content-type", "text/plain"), ("content-length", str(len(payload)))])
        await send_data(payload, True)
    elif path == "/etag":
        tag, control = '"h3-v1"', [("etag", '"h3-v1"'), ("cache-control", "no-cache")]
        if headers.get("if-none-match") == tag:
            await send_head(304, extra + control)
            await send_data(b"", True)
        else:
            payload = f"validated over {protocol}".encode()
            await send_head(200, extra + control + [("content-type", "text/plain"),
                                                    ("content-length", str(len(payload)))])
            await send_data(payload, True)
    elif path == "/slow":
        count, interval = int(query.get("n", 100)), int(query.get("interval_ms", 100)) / 1000
        await send_head(200, extra + [("content-type", "application/octet-stream"),
                                      ("content-length", str(16 * count))])
        for index in range(count):
            await send_data(b"slow-chunk-%06d" % index, index == count - 1)
            await asyncio.sleep(interval)
    elif path == "/connections":
        payload = str(quic_connections).encode()
        await send_head(200, extra + [("content-type", "text/plain"), ("content-length", str(len(payload)))])
        await send_data(payload, True)
    else:
        payload = b"not found"
        await send_head(404, extra + [("content-type", "text/plain"), ("content-length", str(len(payload)))])
        await send_data(payload, True)


HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"}
SEND_BUFFER_LIMIT = 256 * 1024


class UpstreamFailed(Exception):
    """The origin closed or broke its answer."""


async def read_head(reader):
    """The origin's status and fields; 1xx answers are skipped."""
    while True:
        status_line = await reader.readline()
        if not status_line:
            raise UpstreamFailed("the origin closed before its answer")
        parts = status_line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise UpstreamFailed("the origin's status line is malformed")
        fields = []
        while True:
            line = await reader.readline()
            if not line:
                raise UpstreamFailed("the origin closed in its head")
            line = line.decode("latin-1").rstrip("\r\n")
            if not line:
                break
            name, colon, value = line.partition(":")
            if not colon:
                raise UpstreamFailed("the origin's field line is malformed")
            fields.append((name.strip().lower(), value.strip()))
        status = int(parts[1])
        if status >= 200 or status == 101:
            return status, fields


async def exactly(reader, size, failure):
    """`size` bytes of the origin's body as they arrive; UpstreamFailed(failure) if it closes first."""
    left = size
    while left:
        data = await reader.read(min(left, 65536))
        if not data:
            raise UpstreamFailed(failure)
        left -= len(data)
        yield data


async def body_chunks(reader, method, status, fields, trailers):
    """The origin's body as it arrives: by its length, chunked (its trailer fields appended to `trailers`), or up to
    the close."""
    names = dict(fields)
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return
    if "chunked" in names.get("transfer-encoding", "").lower():
        while True:
            size_line = await reader.readline()
            if not size_line:
                raise UpstreamFailed("the origin closed inside a chunked body")
            size = int(size_line.split(b";")[0].strip() or b"x", 16)
            if size == 0:
                while True:
                    line = (await reader.readline()).decode("latin-1").rstrip("\r\n")
                    if not line:
                        return
                    name, _, value = line.partition(":")
                    trailers.append((name.strip().lower(), value.strip()))
            async for data in exactly(reader, size, "the origin closed inside a chunk"):
                yield data
            await reader.readline()
    elif "content-length" in names:
        async for data in exactly(reader, int(names["content-length"]), "the origin closed before its length"):
            yield data
    else:
        while True:
            data = await reader.read(65536)
            if not data:
                return
            yield data


class H3Proxy(QuicConnectionProtocol):
    """HTTP/3 in front of one HTTP/1.1 origin (`self.upstream`, set by the factory)."""

    upstream = ("127.0.0.1", 0)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = None
        self.streams = {}  # stream id -> asyncio.Queue of request body pieces (None: the end)
        self.tasks = {}  # stream id -> the task relaying it

    def quic_event_received(self, event: QuicEvent):
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self.http = H3Connection(self._quic)
        if isinstance(event, (StreamReset, StopSendingReceived)) and event.stream_id in self.tasks:
            # The client cancelled: the origin sees its connection close.
            self.tasks.pop(event.stream_id).cancel()
        if isinstance(event, ConnectionTerminated):
            for task in self.tasks.values():
                task.cancel()
            self.tasks.clear()
        if self.http is not None:
            for http_event in self.http.handle_event(event):
                self.http_event_received(http_event)

    def http_event_received(self, event: H3Event):
        if isinstance(event, HeadersReceived) and event.stream_id in self.streams:
            # The request's trailer fields, after its body.
            body = self.streams[event.stream_id]
            body.put_nowait([(name.decode(), value.decode("latin-1")) for name, value in event.headers])
            if event.stream_ended:
                body.put_nowait(None)
        elif isinstance(event, HeadersReceived):
            body = asyncio.Queue()
            self.streams[event.stream_id] = body
            if event.stream_ended:
                body.put_nowait(None)
            self.tasks[event.stream_id] = asyncio.ensure_future(
                self.relay(event.stream_id, event.headers, body, has_body=not event.stream_ended))
        elif isinstance(event, DataReceived) and event.stream_id in self.streams:
            body = self.streams[event.stream_id]
            if event.data:
                body.put_nowait(event.data)
            if event.stream_ended:
                body.put_nowait(None)

    async def drained(self, stream_id, limit=SEND_BUFFER_LIMIT):
        """Waits until less than `limit` bytes of the stream wait to be sent or acknowledged (QUIC's flow control
        holds them), or the stream is gone."""
        while True:
            stream = self._quic._streams.get(stream_id)
            if stream is None or len(stream.sender._buffer) < limit:
                return
            await asyncio.sleep(0.005)

    async def relay(self, stream_id, request_fields, body, has_body):
        writer = sending = None
        head_sent = False
        try:
            fields = [(name.decode(), value.decode("latin-1")) for name, value in request_fields]
            pseudo = {name: value for name, value in fields if name.startswith(":")}
            method, target = pseudo.get(":method", "GET"), pseudo.get(":path", "/")
            headers = [(n, v) for n, v in fields if not n.startswith(":") and n not in HOP_BY_HOP and n != "host"]
            has_length = any(name == "content-length" for name, _ in headers)
            reader, writer = await asyncio.open_connection(*self.upstream)
            lines = [f"{method} {target} HTTP/1.1", f"host: {pseudo.get(':authority', '')}", "connection: close"]
            lines += [f"{name}: {value}" for name, value in headers]
            # The head goes at once, before any body: an origin may answer first (and wait for nothing).
            chunked = has_body and not has_length
            if chunked:
                lines.append("transfer-encoding: chunked")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

            async def send_body():
                piece, request_trailers = await body.get(), []
                while piece is not None:
                    if isinstance(piece, list):
                        request_trailers = piece
                    else:
                        writer.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                        await writer.drain()
                    piece = await body.get()
                if chunked:
                    lines = "".join(f"{name}: {value}\r\n" for name, value in request_trailers)
                    writer.write(b"0\r\n" + lines.encode("latin-1") + b"\r\n")
                await writer.drain()

            await writer.drain()
            sending = asyncio.ensure_future(send_body())
            try:
                status, answer_fields = await read_head(reader)
            except UpstreamFailed:
                payload = b"bad gateway"
                self.http.send_headers(stream_id, [(b":status", b"502"), (b"content-length", b"11")])
                self.http.send_data(stream_id, payload, True)
                self.transmit()
                return
            relayed = [(b":status", str(status).encode())]
            # The origin writes absolute Locations with its own scheme; the client came over QUIC, so TLS (as nginx's
            # `proxy_redirect http:// https://` does for the HTTP/2 front).
            answer_fields = [(n, "https://" + v[7:] if n == "location" and v.startswith("http://") else v)
                             for n, v in answer_fields]
            relayed += [(n.encode(), v.encode("latin-1")) for n, v in answer_fields if n not in HOP_BY_HOP]
            self.http.send_headers(stream_id, relayed)
            head_sent = True
            self.transmit()
            trailers = []
            async for data in body_chunks(reader, method, status, answer_fields, trailers):
                self.http.send_data(stream_id, data, False)
                self.transmit()
                await self.drained(stream_id)
            if trailers:
                self.http.send_headers(stream_id, [(n.encode(), v.encode("latin-1")) for n, v in trailers], True)
            else:
                self.http.send_data(stream_id, b"", True)
            if not sending.done():
                # The answer is whole before the request: the client may stop sending (RFC 9114 §4.1).
                self._quic.stop_stream(stream_id, 0x0100)  # H3_NO_ERROR
            self.transmit()
        except asyncio.CancelledError:
            pass
        except (UpstreamFailed, ConnectionError, ValueError, OSError):
            if head_sent:
                # What the origin sent reaches the client before the reset, which would discard it (as a cut
                # HTTP/1.1 answer's bytes arrive before its close): a download then resumes from all of them.
                try:
                    await asyncio.wait_for(self.drained(stream_id, limit=1), 10)
                except asyncio.TimeoutError:
                    pass
                self._quic.reset_stream(stream_id, 0x0102)  # H3_INTERNAL_ERROR
                self.transmit()
        finally:
            self.streams.pop(stream_id, None)
            self.tasks.pop(stream_id, None)
            if sending is not None:
                sending.cancel()
            if writer is not None:
                writer.close()


class H3Server(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = None
        self.requests = {}  # stream id -> [method, target, headers, bytearray body]

    def quic_event_received(self, event: QuicEvent):
        global quic_connections
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self.http = H3Connection(self._quic)
            quic_connections += 1
        if self.http is not None:
            for http_event in self.http.handle_event(event):
                self.http_event_received(http_event)

    def http_event_received(self, event: H3Event):
        if isinstance(event, HeadersReceived):
            fields = {name.decode(): value.decode() for name, value in event.headers}
            headers = {name: value for name, value in fields.items() if not name.startswith(":")}
            self.requests[event.stream_id] = [fields.get(":method", "GET"), fields.get(":path", "/"), headers,
                                              bytearray()]
            if event.stream_ended:
                self.start(event.stream_id)
        elif isinstance(event, DataReceived) and event.stream_id in self.requests:
            self.requests[event.stream_id][3] += event.data
            if event.stream_ended:
                self.start(event.stream_id)

    def start(self, stream_id):
        method, target, headers, body = self.requests.pop(stream_id)

        async def send_head(status, fields):
            head = [(b":status", str(status).encode())] + [(n.encode(), v.encode()) for n, v in fields]
            self.http.send_headers(stream_id, head)
            self.transmit()

        async def send_data(data, end):
            self.http.send_data(stream_id, data, end)
            self.transmit()
            # Lets the connection's flow control and the event loop breathe between large chunks.
            await asyncio.sleep(0)

        async def run():
            try:
                await answer("h3", method, target, headers, bytes(body), send_head, send_data)
            except DropStream:
                self._quic.reset_stream(stream_id, 0x010C)  # H3_REQUEST_CANCELLED
                self.transmit()
            except Exception:
                # The client reset the stream (a cancelled call) or left: nothing more to send.
                pass

        asyncio.ensure_future(run())


async def tcp_client(reader, writer, h3_port):
    """HTTPS/1.1 with keep-alive, announcing the HTTP/3 port in every answer."""
    try:
        while True:
            request_line = await reader.readline()
            if not request_line:
                return
            method, target, _ = request_line.decode("latin-1").split(" ", 2)
            headers = {}
            while True:
                line = (await reader.readline()).decode("latin-1").rstrip("\r\n")
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            body = await reader.readexactly(length) if length else b""

            announced = parse_target(target)[1].get("alt_port", h3_port)

            async def send_head(status, fields):
                reason = {200: "OK", 206: "Partial Content", 304: "Not Modified", 503: "Service Unavailable"}
                lines = [f"HTTP/1.1 {status} {reason.get(status, 'Not Found')}",
                         f'alt-svc: h3=":{announced}"; ma={ALT_SVC_MAX_AGE}']
                lines += [f"{name}: {value}" for name, value in fields]
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

            async def send_data(data, end):
                writer.write(data)
                await writer.drain()

            await answer("http/1.1", method, target, headers, body, send_head, send_data)
    except (ConnectionError, asyncio.IncompleteReadError, ValueError, DropStream):
        pass
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--proxy", action="append", default=[], metavar="HOST:PORT")
    arguments = parser.parse_args()

    configuration = QuicConfiguration(alpn_protocols=H3_ALPN, is_client=False, max_datagram_frame_size=65536)
    configuration.load_cert_chain(arguments.cert, arguments.key)
    quic = await serve(arguments.host, 0, configuration=configuration, create_protocol=H3Server)
    h3_port = quic._transport.get_extra_info("sockname")[1]

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(arguments.cert, arguments.key)
    context.set_alpn_protocols(["http/1.1"])
    tcp = await asyncio.start_server(lambda r, w: tcp_client(r, w, h3_port), arguments.host, 0, ssl=context)
    tcp_port = tcp.sockets[0].getsockname()[1]

    proxy_ports = []
    for upstream in arguments.proxy:
        host, _, port = upstream.rpartition(":")
        protocol = type("H3ProxyTo", (H3Proxy,), {"upstream": (host, int(port))})
        front = await serve(arguments.host, 0, configuration=configuration, create_protocol=protocol)
        proxy_ports.append(str(front._transport.get_extra_info("sockname")[1]))

    with open(arguments.port_file, "w") as file:
        file.write(" ".join([str(h3_port), str(tcp_port)] + proxy_ports) + "\n")
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
