#!/usr/bin/env python3
"""A SOCKS5 server that refuses, the way RFC 1928 and RFC 1929 say, for ServerAPIKit's SOCKS tests
(standard library only). The real SOCKS server of the test servers (pproxy) closes the connection on a
wrong password and confirms a connection before opening it; this one sends the protocol's own answers.

Started by the tests, one per test, on a free loopback port; prints "PORT <n>" on its first line once it
listens and exits when its stdin closes (or on SIGTERM).

    python3 socks_refusal.py --login        # asks for a user name and password, answers every login
                                            # with status 1 (failure) and closes
    python3 socks_refusal.py --reply CODE   # no authentication; answers every CONNECT with reply CODE
                                            # (3 network unreachable, 4 host unreachable, 5 refused, …)

Credentials are never printed.
"""

import argparse
import socket
import sys
import threading


def read_exactly(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def handle(connection, arguments):
    with connection:
        try:
            version, method_count = read_exactly(connection, 2)
            methods = read_exactly(connection, method_count)
            if version != 5:
                return
            if arguments.login:
                if 2 not in methods:
                    connection.sendall(b"\x05\xff")
                    return
                connection.sendall(b"\x05\x02")
                _, user_length = read_exactly(connection, 2)
                read_exactly(connection, user_length)
                (password_length,) = read_exactly(connection, 1)
                read_exactly(connection, password_length)
                connection.sendall(b"\x01\x01")
                return
            connection.sendall(b"\x05\x00")
            _, command, _, address_type = read_exactly(connection, 4)
            if address_type == 1:
                read_exactly(connection, 4)
            elif address_type == 3:
                (length,) = read_exactly(connection, 1)
                read_exactly(connection, length)
            elif address_type == 4:
                read_exactly(connection, 16)
            read_exactly(connection, 2)
            connection.sendall(bytes([5, arguments.reply, 0, 1, 0, 0, 0, 0, 0, 0]))
        except (ConnectionError, OSError, ValueError):
            pass


def main():
    parser = argparse.ArgumentParser()
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--login", action="store_true")
    mode.add_argument("--reply", type=int)
    arguments = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(f"PORT {listener.getsockname()[1]}", flush=True)

    def serve():
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=handle, args=(connection, arguments), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    # Exits when the test closes stdin.
    sys.stdin.read()


if __name__ == "__main__":
    main()
