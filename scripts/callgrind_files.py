#!/usr/bin/env python3
"""The package's source files a request runs code from, and how many instructions per request each.

    scripts/callgrind_files.py FEWER.out MORE.out REQUESTS

FEWER.out and MORE.out are callgrind outputs of the same client making fewer and more requests (REQUESTS more in
the second): a file counts when its lines (inlined ones included: callgrind's fi/fe records) cost at least one
instruction per request more in the second run, so that start-up and shut-down cancel out. Only files under
Sources/ServerAPIKit and Backends/ServerAPICurl are listed. The compiler's outlined copies and destructions of a
value (mangled names ending in `WO` and a letter, such as `$s…URLVSgWOe`) are left out: every file that needs one
emits it, the linker keeps one copy, and the file whose name that copy carries is arbitrary (a call's `Optional<URL>`
once showed up as `CurlTransport+AltSvc.swift`). `--with-outlined` counts them too. How to make the two runs:

    COUNT=$(swift build -c release --static-swift-stdlib --package-path Benchmarks \\
        --scratch-path Benchmarks/.build-static --show-bin-path)/serverapi-curl-count
    valgrind --tool=callgrind --callgrind-out-file=few.out $COUNT --manager --url URL --requests 50
    valgrind --tool=callgrind --callgrind-out-file=more.out $COUNT --manager --url URL --requests 150
    scripts/callgrind_files.py few.out more.out 100 [--with-outlined]
"""
import collections
import re
import sys

NAMED = re.compile(r"^(fl|fi|fe|fn|cfi|cfl|cfn|ob|cob)=\((\d+)\)(?: (.*))?$")
# An outlined value operation: `WO` and its kind (`y` copy, `e` consume, `h` destroy, `b`/`c`/`d`/`f` the
# initialisations and assignments, `i`/`g` an enumeration's tag...), perhaps with a specialisation's suffix.
OUTLINED = re.compile(r"WO[a-zA-Z]\d*_?(Tf[0-9a-z_]*)?$")
WITH_OUTLINED = "--with-outlined" in sys.argv


def costs(path):
    """Instructions by source file: each cost line goes to the file in force (fl, or fi/fe for inlined code)."""
    names, per_file = {}, collections.Counter()
    function_file = current = None
    skip_call_cost = outlined = False
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        match = NAMED.match(line)
        if match:
            kind, ident, name = match.groups()
            space = "fn" if kind in ("fn", "cfn") else "ob" if kind in ("ob", "cob") else "fl"
            if name:
                names[(space, ident)] = name
            if kind == "fl":
                function_file = current = names.get(("fl", ident))
            elif kind in ("fi", "fe"):
                current = names.get(("fl", ident))
            elif kind == "fn":
                current = function_file
                outlined = not WITH_OUTLINED and bool(OUTLINED.search(names.get(("fn", ident), "")))
            continue
        if line.startswith("calls="):
            # The next cost line is the call's inclusive cost, which belongs to the callee.
            skip_call_cost = True
            continue
        if line and (line[0].isdigit() or line[0] in "+-*"):
            if skip_call_cost:
                skip_call_cost = False
                continue
            fields = line.split()
            if len(fields) >= 2 and current and not outlined:
                per_file[current] += int(fields[1])
    return per_file


def main():
    fewer, more, requests = costs(sys.argv[1]), costs(sys.argv[2]), float(sys.argv[3])
    rows = []
    for path in set(fewer) | set(more):
        found = re.search(r"(Sources/ServerAPIKit|Backends/ServerAPICurl)/.*", path)
        if found:
            rows.append(((more.get(path, 0) - fewer.get(path, 0)) / requests, found.group(0)))
    per_request = sorted((row for row in rows if row[0] >= 1), reverse=True)
    for instructions, path in per_request:
        print(f"{instructions:9.0f}  {path}")
    core = sum(1 for _, path in per_request if path.startswith("Sources/"))
    print(f"{len(per_request)} files run per request ({core} core, {len(per_request) - core} curl); {len(rows)} touched")


if __name__ == "__main__":
    main()
