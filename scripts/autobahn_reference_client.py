#!/usr/bin/env python3
"""A conforming WebSocket client for Autobahn|Testsuite's fuzzingserver, to check the harness with.

It runs every case the way an Autobahn client does (Tests/Autobahn/README.md): GET /getCaseCount, then for each
case /getCaseInfo?case=N (for its id) and /runCase?case=N&agent=NAME, echoing each message back as it came
(text as text, binary as binary) until the server closes, then /updateReports?agent=NAME. It prints how long
each case group took. The client is the `websockets` package (scripts/requirements-autobahn-client.txt), with
permessage-deflate offered as websockets does by default (the server takes it in cases 12.* and 13.* only), no
keep-alive pings (they would be
frames the cases do not expect) and no message size limit (cases 9.* send 16 MiB) and no limit on a message's fragment count.

    scripts/autobahn.sh reference [--agent NAME] [--groups 1,2,9]
"""

import argparse
import asyncio
import json
import os
import sys
import time
from urllib.parse import quote

# websockets fails a message of more than 4096 fragments with 1009 by default; cases 9.3.1 and 9.4.1 send
# 65536 (4 MiB in 64-byte fragments). Read when websockets is imported.
os.environ.setdefault("WEBSOCKETS_MAX_FRAGMENTS", str(2**20))

import websockets  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

CONNECT_OPTIONS = {
    "compression": "deflate",
    "ping_interval": None,
    "max_size": None,
    "open_timeout": 10,
    "close_timeout": 10,
}


async def fetch_text(url):
    """Connects, reads the one message the server sends, and waits for its close."""
    async with connect(url, **CONNECT_OPTIONS) as ws:
        message = await ws.recv()
        try:
            await ws.recv()
        except ConnectionClosed:
            pass
        return message


async def run_case(url):
    """Echoes every message until the server closes. Returns how the connection ended."""
    try:
        async with connect(url, **CONNECT_OPTIONS) as ws:
            try:
                async for message in ws:
                    await ws.send(message)
            except ConnectionClosed:
                pass
            return "closed {}".format(ws.close_code)
    except ConnectionClosed as error:
        return "closed during the handshake: {}".format(error)
    except (OSError, websockets.exceptions.InvalidHandshake) as error:
        return "failed: {}".format(error)


def group_of(case_id):
    return case_id.split(".")[0]


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="the fuzzingserver, ws://127.0.0.1:PORT")
    parser.add_argument("--agent", default="websockets-" + websockets.__version__, help="the agent name in the report")
    parser.add_argument("--groups", default="", help="run only these case groups, e.g. 1,2,9 (default: all the server has)")
    parser.add_argument("--case-timeout", type=float, default=300, help="seconds one case may take")
    args = parser.parse_args()

    base = args.url.rstrip("/")
    agent = quote(args.agent, safe="")
    groups = {group.strip() for group in args.groups.split(",") if group.strip()}

    count = json.loads(await fetch_text(base + "/getCaseCount"))
    print("{} cases; agent {}".format(count, args.agent), flush=True)

    group_seconds = {}
    group_cases = {}
    order = []
    started = time.monotonic()
    for number in range(1, count + 1):
        info = json.loads(await fetch_text("{}/getCaseInfo?case={}".format(base, number)))
        case_id = info["id"]
        group = group_of(case_id)
        if groups and group not in groups:
            continue
        if group not in group_seconds:
            order.append(group)
            group_seconds[group] = 0.0
            group_cases[group] = 0
        case_started = time.monotonic()
        try:
            outcome = await asyncio.wait_for(
                run_case("{}/runCase?case={}&agent={}".format(base, number, agent)), args.case_timeout)
        except asyncio.TimeoutError:
            outcome = "timed out after {:.0f} s".format(args.case_timeout)
        seconds = time.monotonic() - case_started
        group_seconds[group] += seconds
        group_cases[group] += 1
        if seconds >= 1 or not outcome.startswith("closed"):
            print("case {} ({}): {:.1f} s, {}".format(number, case_id, seconds, outcome), flush=True)

    async with connect("{}/updateReports?agent={}".format(base, agent), **CONNECT_OPTIONS) as ws:
        try:
            await ws.recv()
        except ConnectionClosed:
            pass
    total = time.monotonic() - started

    print()
    print("{:<7} {:>6} {:>10}".format("group", "cases", "seconds"))
    for group in order:
        print("{:<7} {:>6} {:>10.1f}".format(group + ".*", group_cases[group], group_seconds[group]))
    print("{:<7} {:>6} {:>10.1f}".format("all", sum(group_cases.values()), total))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
