#!/usr/bin/env python3
"""One server for HTTP/1.1, HTTP/2 and HTTP/3, for `scripts/bench-transports.sh --http3`: hypercorn (pinned in
scripts/requirements-bench-http3.txt) in one process, one asyncio loop, serving one document over TLS on a TCP port
(HTTP/1.1 or HTTP/2, by ALPN) and over QUIC on a UDP port (HTTP/3, aioquic). Every protocol meets the same code and
the same single Python thread, so that the rows differ by the client's protocol, not by the server. The two ports have the
same number, so that one URL serves every protocol.

    python3 h123_server.py --port PORT --cert server.pem --key server.key --body small.json

GET /connections answers how many connections (TCP and QUIC together) have carried a request since the last such
query, its own included, as text, and starts counting again: the benchmark tells a client that reconnects from one
that keeps its connections. Any other path answers 200 with the body file (application/json).
"""

import argparse
import asyncio

from hypercorn.asyncio import serve
from hypercorn.config import Config


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--body", required=True)
    arguments = parser.parse_args()
    body = open(arguments.body, "rb").read()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    # A connection is its client address and port: a TCP connection's or a QUIC connection's UDP socket. Counted
    # between two queries only, so that a port the kernel hands out again in a later row is counted again.
    connections = set()

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        connections.add(tuple(scope["client"]))
        if scope["path"] == "/connections":
            count = str(len(connections)).encode()
            connections.clear()
            count_head = [(b"content-length", str(len(count)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": count_head})
            await send({"type": "http.response.body", "body": count})
            return
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": body})

    config = Config()
    config.bind = [f"127.0.0.1:{arguments.port}"]
    config.quic_bind = [f"127.0.0.1:{arguments.port}"]
    config.certfile = arguments.cert
    config.keyfile = arguments.key
    config.accesslog = None
    # Hypercorn closes an HTTP/1.1 or HTTP/2 connection after 1,000 requests by default; QUIC connections have no
    # such limit, and nginx in the other benchmarks none either.
    config.keep_alive_max_requests = 1 << 40
    # Nor idle ones after hypercorn's 5 s: a client setting up 64 TLS connections on GnuTLS reads the CA directory
    # for each, and on a busy machine its first connections sat idle that long, were closed, and were set up again.
    config.keep_alive_timeout = 3600
    asyncio.run(serve(app, config))


if __name__ == "__main__":
    main()
