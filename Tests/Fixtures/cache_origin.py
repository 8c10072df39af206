"""The scripted origin of the HTTP caching conformance cases, served by the fault fixture (fault_server.py).

A test puts a case's script here, then calls the case's URL through a cache and a real transport; the origin
answers each request with the response its step scripts, and records every request that reached it, so that the
test can check what the cache sent and whether a call reached the origin at all
(Tests/ServerAPICacheTests/Conformance/RealOrigin.swift is the Swift side).

  PUT  /cache/script?key=K     the script of case run K (JSON, below); replaces any earlier one with that key
  ANY  /cache/case/K[/...]     the origin: the step is the one the request's Conformance-Step header names
                               (a request the cache makes in the background copies the call's headers), else 1
  GET  /cache/log?key=K        JSON: the requests that reached the origin, in order: {"step", "method",
                               "headers": [[name, value]...] as received, "sent": [[name, value]...] the checked
                               headers the origin sent, values of one name joined with ", "}
  DELETE /cache/script?key=K   forgets run K

The script: {"steps": [step...]}, a step being
  {"status": 200, "headers": [[name, value, checked]...], "body": "text" or null (the case's id then),
   "id": "case id", "delay": seconds, "disconnect": bool, "validated": bool,
   "previous": {"Last-Modified": ..., "ETag": ...} (the validators of the previous step as scripted)}
where a value is {"text": "..."} or {"date": offset, "rfc850": bool}: an HTTP date `offset` seconds from the
origin's clock when it answers (in whole seconds, rounded up). `validated`: the step expects a conditional request with the validators the
origin sent in the previous step (or, when the cache answered that step, the scripted ones): it answers 304 when
it gets one, else 999. Each response carries Origin-Count (requests answered so far in the run, this one
included), Origin-Step and Origin-Now (the origin's clock in seconds since 1970), and sends its own Date only when
the script has none. `disconnect`: the request is recorded and the connection closed without an answer.
"""

import json
import math
import socket
import threading
import time
from email.utils import formatdate

_lock = threading.Lock()
# key -> {"steps": [...], "received": [...], "sent_by_step": {step: [(name, value)...]}}
_runs = {}

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def http_date(seconds, rfc850=False):
    if not rfc850:
        return formatdate(seconds, usegmt=True)
    t = time.gmtime(seconds)
    return "%s, %02d-%s-%02d %02d:%02d:%02d GMT" % (
        WEEKDAYS[t.tm_wday], t.tm_mday, MONTHS[t.tm_mon - 1], t.tm_year % 100, t.tm_hour, t.tm_min, t.tm_sec)


def value_text(value, now):
    if "date" in value:
        return http_date(now + int(value["date"]), bool(value.get("rfc850")))
    return value["text"]


def handle(handler, path):
    """Answers a request under /cache/; returns False when the path is not one of this origin's."""
    key = handler.query.get("key", "")
    if path == "/cache/script":
        if handler.command == "PUT":
            script = json.loads(b"".join(handler.body_chunks()) or b"{}")
            with _lock:
                _runs[key] = {"steps": script["steps"], "received": [], "sent_by_step": {}}
            handler.send_json(200, {"steps": len(script["steps"])})
        elif handler.command == "DELETE":
            handler.drain_body()
            with _lock:
                _runs.pop(key, None)
            handler.send_json(200, {})
        else:
            handler.drain_body()
            handler.send_text(405, "PUT or DELETE\n")
        return True
    if path == "/cache/log":
        handler.drain_body()
        with _lock:
            run = _runs.get(key)
            received = list(run["received"]) if run else None
        if received is None:
            handler.send_text(404, "no run %s\n" % key)
        else:
            handler.send_json(200, received)
        return True
    if path.startswith("/cache/case/"):
        answer(handler, path[len("/cache/case/"):].split("/")[0])
        return True
    return False


def answer(handler, key):
    handler.drain_body()
    with _lock:
        run = _runs.get(key)
    if run is None:
        handler.send_text(404, "no script for %s\n" % key)
        return
    steps = run["steps"]
    try:
        number = int(handler.headers.get("Conformance-Step", "1"))
    except ValueError:
        number = 1
    if not 1 <= number <= len(steps):
        number = 1
    step = steps[number - 1]
    if step.get("delay"):
        time.sleep(step["delay"])
    # The origin's clock in whole seconds, rounded up: a Date it sends is never earlier than the moment it
    # answers, so that a response's age counts from then (with the second truncated, a response would start up
    # to a second old, and a case that expects it fresh a moment later would depend on how busy the machine is).
    now = math.ceil(time.time())

    status = step.get("status") or 200
    if step.get("validated"):
        with _lock:
            previous = run["sent_by_step"].get(number - 1)
        if previous is None:
            previous = list(step.get("previous", {}).items())
        validators = {name.lower(): value for name, value in previous}
        last_modified, etag = validators.get("last-modified"), validators.get("etag")
        if last_modified is not None and handler.headers.get("If-Modified-Since") == last_modified:
            status = 304
        elif etag is not None and handler.headers.get("If-None-Match") == etag:
            status = 304
        else:
            status = 999

    with _lock:
        count = len(run["received"]) + 1
    headers = [("Origin-Count", str(count)), ("Origin-Step", str(number)), ("Origin-Now", str(now))]
    checked = []
    for name, value, is_checked in step.get("headers", []):
        text = value_text(value, now)
        headers.append((name, text))
        if not is_checked:
            continue
        for entry in checked:
            if entry[0].lower() == name.lower():
                entry[1] += ", " + text
                break
        else:
            checked.append([name, text])
    names = {name.lower() for name, _ in headers}
    if "content-type" not in names:
        headers.append(("Content-Type", "text/plain"))
    if "date" not in names:
        headers.append(("Date", http_date(now)))

    with _lock:
        run["received"].append({
            "step": number, "method": handler.command, "headers": handler.header_pairs(), "sent": checked,
        })
        run["sent_by_step"][number] = headers
    if step.get("disconnect"):
        handler.close_connection = True
        try:
            handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return

    has_body = status not in (204, 304) and handler.command != "HEAD"
    body = (step.get("body") if step.get("body") is not None else step.get("id", "")).encode("utf-8")
    # A scripted Content-Length frames the body: the body is cut or padded with spaces to it, so that the bytes on
    # the connection match what the response says (the cases that script one do not check the body).
    scripted_length = next((text for name, text in headers if name.lower() == "content-length"), None)
    if scripted_length is not None and scripted_length.isdigit():
        body = body[:int(scripted_length)].ljust(int(scripted_length), b" ")
    handler.send_response_only(status)
    for name, text in headers:
        handler.send_header(name, text)
    if status not in (204, 304) and "content-length" not in names:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if has_body:
        handler.wfile.write(body)
