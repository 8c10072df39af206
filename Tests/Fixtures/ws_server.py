#!/usr/bin/env python3
"""The WebSocket peer of ServerAPIKit's conformance tests, on loopback (the `websockets` package, pinned in
scripts/requirements-test.txt). scripts/test-server.sh starts it on three ports: plain (SAPI_WS_URL), TLS with
the test CA's certificate (SAPI_WSS_URL, trusted through SAPI_H2_CA_FILE), and plain with permessage-deflate
(SAPI_WS_DEFLATE_URL: it accepts a client's offer, as websockets does by default, and compresses every message it
sends; the first two decline compression). The port file lists them in that order (without --cert: plain, deflate).

    python3 ws_server.py --port-file /tmp/ports [--cert server.pem --key server.key]

Paths (a query's `id=X` records the close code the client sent, which `/report?of=X` then sends as text):

  /echo                  echoes every message (text as text, binary as binary)
  /headers               sends the handshake's request headers as one JSON text message, then echoes
  /close?code=C&reason=R sends "closing" (or the text T of &text=T), then closes with code C and reason R
  /abrupt                sends "bye", then drops the TCP connection without a close frame
  /big?size=N            sends one binary message of N bytes (16 MiB by default), then echoes
  /fragmented            sends "fragmented" in three text frames and b"\\x00\\x01\\x02\\x03" in two binary ones,
                         then echoes
  /invalid-utf8          sends a text frame whose payload is not UTF-8, then waits for the client's close
  /invalid-utf8-fragments
                         starts a text message with a valid fragment, sends a fragment that no UTF-8 text can
                         continue, then waits (10 s) for the client's close; a client that waits for the end of the
                         message instead gets no end: the connection is dropped (Autobahn 6.4.1, fail fast)
  /many-fragments?count=N&size=S
                         sends one binary message in N frames of S bytes (65,536 of 64 by default: 4 MiB, as
                         Autobahn 9.3.1), then echoes
  /whoami                sends the address the connection came from (a proxy's, through one), then echoes
  /ping                  pings the client, and sends "pong received" once its pong arrives, then echoes
  /ping-mid-frame        after the client's first message, stops reading and sends "paused"; once the client's
                         next message (a binary one larger than the sockets' buffers: /big's bytes) is stuck
                         part-way, with 64 KiB of it waiting unread, pings the client three times, reads on, and
                         sends "N bytes intact, P pongs" (or "N bytes changed, …"); then echoes. A pong written
                         inside the part-sent frame (libcurl 8.14's frame mode did so; fixed in 8.16) corrupts it
  /flood?id=X&size=S     sends "tick N" messages of S bytes (1 KiB by default) as /stream does, and keeps
                         what the client sends, which
                         /received?of=X then sends as one text message (the messages joined by newlines)
  /stream                sends "tick N" messages of 1 KiB without end, as fast as the client reads
  /refuse/CODE           refuses the handshake with status CODE and the body "refused with CODE"
  /hostile?code=C        sends HOSTILE_MESSAGE (terminal escapes: a title set, a screen cleared, an 8-bit CSI), then
                         closes with code C (4000 by default) and HOSTILE_REASON, escapes too: a client that prints
                         them raw lets the server drive the user's terminal (sapi's SapiTerminalEscapeTests)
  /report?of=X           sends the close code (and reason) the connection with id X received, as "CODE REASON",
                         or "none"; then closes
  any path, with Sec-WebSocket-Protocol: the first of chat.v1, chat.v2 the client offers is chosen
"""

import argparse
import array
import asyncio
import fcntl
import http
import json
import ssl
import termios
import urllib.parse

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode

SUBPROTOCOLS = ["chat.v1", "chat.v2"]
HOSTILE_MESSAGE = "message \x1b]0;PWNED\x07\x1b[2J\u009b2J end"
HOSTILE_REASON = "reason \x1b]0;PWNED\x07\x1b[2J end"
closes = {}
close_events = {}
# What the client sent on each /flood connection, by its id.
received = {}


def pattern(size):
    # Built by repetition: a generator over 16 MiB would hold the event loop (every other connection) for seconds.
    return (bytes(range(251)) * (size // 251 + 1))[:size]


def unread_bytes(ws):
    """Bytes the kernel holds for the server's socket, not read yet."""
    count = array.array("i", [0])
    fcntl.ioctl(ws.transport.get_extra_info("socket").fileno(), termios.FIONREAD, count)
    return count[0]


def select_subprotocol(connection, offered):
    for name in offered:
        if name in SUBPROTOCOLS:
            return name
    return None


def process_request(connection, request):
    path = urllib.parse.urlsplit(request.path).path
    if path.startswith("/refuse/"):
        code = int(path.rsplit("/", 1)[1])
        return connection.respond(http.HTTPStatus(code), f"refused with {code}\n")
    return None


async def echo(ws):
    async for message in ws:
        await ws.send(message)


async def handler(ws):
    parts = urllib.parse.urlsplit(ws.request.path)
    path = parts.path
    query = dict(urllib.parse.parse_qsl(parts.query))
    key = query.get("id")
    if key:
        close_events.setdefault(key, asyncio.Event())
    try:
        await route(ws, path, query)
    finally:
        if key:
            await ws.wait_closed()
            received = ws.protocol.close_rcvd
            closes[key] = f"{received.code} {received.reason}" if received else "none"
            close_events[key].set()


async def fair(tick):
    """Lets the other connections of every peer run every 64 messages of a flood.

    `send` returns without yielding to the event loop while the connection's write buffer is below its high-water
    mark, and a reader that stopped reading leaves megabytes of kernel buffers to fill first: compressed (a repeated
    tick deflates to a few bytes), that is a million messages, and the event loop, which serves all three peers,
    answered no other handshake for over a minute. (Every message would slow the flood itself down too much.)
    """
    if tick % 64 == 0:
        await asyncio.sleep(0)


async def route(ws, path, query):
    if path == "/echo":
        await echo(ws)
    elif path == "/headers":
        headers = {name.lower(): value for name, value in ws.request.headers.raw_items()}
        await ws.send(json.dumps(headers))
        await echo(ws)
    elif path == "/close":
        await ws.send(query.get("text", "closing"))
        await ws.close(int(query.get("code", "1000")), query.get("reason", ""))
    elif path == "/abrupt":
        await ws.send("bye")
        # Let the message leave before the connection drops.
        await asyncio.sleep(0.05)
        ws.transport.abort()
    elif path == "/big":
        await ws.send(pattern(int(query.get("size", str(16 << 20)))))
        await echo(ws)
    elif path == "/fragmented":
        await ws.send(["frag", "ment", "ed"])
        await ws.send([b"\x00\x01", b"\x02\x03"])
        await echo(ws)
    elif path == "/invalid-utf8":
        await ws.send(b"\xce\xba\xff\xfe", text=True)
        await ws.wait_closed()
    elif path == "/invalid-utf8-fragments":

        async def fragments():
            yield "valid κόσμε ".encode()
            yield b"\xf4\x90\x80\x80"
            try:
                await asyncio.wait_for(ws.wait_closed(), 10)
            except asyncio.TimeoutError:
                ws.transport.abort()

        try:
            await ws.send(fragments(), text=True)
        except ConnectionClosed:
            pass
        await ws.wait_closed()
    elif path == "/many-fragments":
        count = int(query.get("count", "65536"))
        size = int(query.get("size", "64"))
        chunk = (bytes(range(256)) * (size // 256 + 1))[:size]
        await ws.send([chunk] * count)
        await echo(ws)
    elif path == "/whoami":
        await ws.send(ws.remote_address[0])
        await echo(ws)
    elif path == "/ping":
        pong = await ws.ping(b"server-ping")
        await pong
        await ws.send("pong received")
        await echo(ws)
    elif path == "/ping-mid-frame":
        await ws.recv()
        # websockets resumes reading only where it paused it itself: this pause holds until resume_reading below.
        ws.transport.pause_reading()
        await ws.send("paused")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while unread_bytes(ws) < 64 * 1024:
            if loop.time() > deadline:
                await ws.close(1011, "the client sent no message")
                return
            await asyncio.sleep(0.001)
        pongs = [await ws.ping(f"mid-frame {n}".encode()) for n in range(3)]
        ws.transport.resume_reading()
        message = await ws.recv()
        intact = isinstance(message, bytes) and message == pattern(len(message))
        answered = 0
        try:
            await asyncio.wait_for(asyncio.gather(*pongs), 10)
            answered = len(pongs)
        except asyncio.TimeoutError:
            answered = sum(1 for pong in pongs if pong.done())
        await ws.send(f"{len(message)} bytes {'intact' if intact else 'changed'}, {answered} pongs")
        await echo(ws)
    elif path == "/stream":
        tick = 0
        while True:
            tick += 1
            await ws.send(f"tick {tick} ".ljust(1024, "."))
            await fair(tick)
    elif path == "/flood":
        key = query.get("id", "")
        received.setdefault(key, [])

        async def keep():
            async for message in ws:
                received[key].append(message if isinstance(message, str) else message.hex())

        keeper = asyncio.create_task(keep())
        try:
            tick = 0
            size = int(query.get("size", "1024"))
            while True:
                tick += 1
                await ws.send(f"tick {tick} ".ljust(size, "."))
                await fair(tick)
        finally:
            keeper.cancel()
    elif path == "/received":
        await ws.send("\n".join(received.get(query.get("of", ""), [])))
        await ws.close()
    elif path == "/hostile":
        await ws.send(HOSTILE_MESSAGE)
        await ws.close(int(query.get("code", "4000")), HOSTILE_REASON)
    elif path == "/report":
        key = query.get("of", "")
        event = close_events.setdefault(key, asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), 10)
        except asyncio.TimeoutError:
            pass
        await ws.send(closes.get(key, "none"))
        await ws.close()
    else:
        await ws.close(1008, f"no such path {path}")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    options = dict(
        process_request=process_request,
        select_subprotocol=select_subprotocol,
        max_size=64 << 20,
        # The client's keep-alive is the client's to test: the server never pings by itself.
        ping_interval=None,
        compression=None,
    )
    plain = await serve(handler, args.host, 0, **options)
    ports = [plain.sockets[0].getsockname()[1]]
    servers = [plain]
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        secure = await serve(handler, args.host, 0, ssl=context, **options)
        ports.append(secure.sockets[0].getsockname()[1])
        servers.append(secure)
    # The same routes with permessage-deflate: websockets' default offer answer (context takeover both ways, windows
    # of 15 bits), every message compressed, fragments of a message too.
    compressed = await serve(handler, args.host, 0, **dict(options, compression="deflate"))
    ports.append(compressed.sockets[0].getsockname()[1])
    servers.append(compressed)
    with open(args.port_file, "w") as file:
        file.write(" ".join(str(port) for port in ports) + "\n")
    await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
