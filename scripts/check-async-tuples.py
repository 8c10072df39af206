#!/usr/bin/env python3
"""Fails on a tuple literal that holds an `await`, in the package's Swift sources.

Swift 6.3.1 miscompiles such a tuple when it is an async closure's result: the elements written before the
suspension are lost in optimized builds (notes/compiler-async-tuple-result.md). Await into a local first, then
build the tuple.

    scripts/check-async-tuples.py            # exit 1 and one line per finding, or exit 0
"""
import re
import subprocess
import sys

OPENERS = re.compile(r"(?:\breturn|=|\bin|\{|\()\s*\(")


def findings(path, source):
    for match in OPENERS.finditer(source):
        start = match.end() - 1
        depth, index, comma = 0, start, False
        while index < len(source):
            char = source[index]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    break
            elif char == "," and depth == 1:
                comma = True
            index += 1
        body = source[start:index + 1]
        if comma and re.search(r"\bawait\b", body) and "\n}" not in body:
            line = source.count("\n", 0, start) + 1
            yield f"{path}:{line}: a tuple holds an `await`: {' '.join(body.split())[:120]}"


def main():
    # notes/ keeps the compiler's reproducer, which has the shape on purpose.
    files = [
        path
        for path in subprocess.check_output(["git", "ls-files", "*.swift"], text=True).split()
        if not path.startswith("notes/")
    ]
    found = []
    for path in files:
        with open(path, encoding="utf-8") as handle:
            found.extend(findings(path, handle.read()))
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print("await into a local before building the tuple (notes/compiler-async-tuple-result.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
