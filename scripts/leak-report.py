#!/usr/bin/env python3
"""Reads LeakSanitizer reports (ASAN_OPTIONS=log_path=DIR/asan) and fails on a leak of the library's.

A leak is the library's when its allocation stack has a frame in libcurl, in the curl backend
(`ServerAPICurl`), the URLSession backend, or the core (`ServerAPIKit`) that was not made by test
fixture code. Leaks whose stack runs only through the test fixtures that launch helper processes
with Foundation's `Process` (`FixtureProcess` in the ServerAPITestSupport target, and what launches
through it: the curl test server, the proxy fixture, openssl for certificates) are listed apart:
on Linux, swift-corelibs-foundation keeps a `Process` with a termination handler, its
`Pipe`s and what the handler captures in a reference cycle, so they are never freed; they are test
scaffolding, not library code, and are counted, not hidden. So are leaks made inside
FoundationNetworking itself with no frame of ours between (on Linux its `CFURLSessionCurlHostIsEqual`
parses every task's URL with `curl_url_set` and never frees the handle): the URLSession backend
cannot free what Foundation allocates and drops. Records whose stack stops inside Foundation before
any caller (FileHandles of the fixtures' Pipes, seen so) are counted as unattributed: a leak of ours
would also leave our own objects (a BodyReader holding a FileHandle, a CurlTransfer) in the report,
and those fail the check.

    scripts/leak-report.py DIR
"""
import glob
import re
import sys

LIBRARY = re.compile(r"libcurl|curl_|\$s13ServerAPICurl(?!Tests)|\$s19ServerAPIURLSession|\$s12ServerAPIKit")
# Mangled names: `CurlTestServer` is `08CurlTestA0V` (Swift reuses the word "Server" of the module's name).
FIXTURE = re.compile(
    r"\$s20ServerAPITestSupport(14FixtureProcess|08CurlTestA0V|16TestCertificates)"
    r"|\$s18ServerAPICurlTests12ProxyFixture"
    r"|\$s10Foundation7Process|\$s10Foundation4Pipe|\$s6XCTest"
)
OURS = re.compile(r"\$s13ServerAPICurl(?!Tests)|\$s19ServerAPIURLSession|\$s12ServerAPIKit")
FOUNDATION_NETWORKING = re.compile(r"CFURLSession|\$s20FoundationNetworking")


def main() -> int:
    files = sorted(glob.glob(sys.argv[1] + "/asan*"))
    library, fixture, platform, unattributed = [], [], [], []
    for path in files:
        text = open(path, errors="replace").read()
        for block in re.split(r"\n(?=(?:Direct|Indirect) leak of)", text)[1:]:
            head = block.splitlines()[0]
            frames = re.findall(r"#\d+ 0x[0-9a-f]+ in (\S+)", block)
            fixture_frame = any(FIXTURE.search(f) for f in frames)
            # The core's `Locked` inside the test support's `EventCounter` (a fixture's exit event) is the
            # counter's, not the library's.
            made_by_counter = any(re.search(r"ServerAPITestSupport12EventCounterC", f) for f in frames)
            library_frame = any(
                LIBRARY.search(f) for f in frames
                if not FIXTURE.search(f) and not (made_by_counter and "ServerAPIKit6Locked" in f)
            )
            if fixture_frame and not library_frame:
                fixture.append(head)
            elif any(FOUNDATION_NETWORKING.search(f) for f in frames) and not any(OURS.search(f) for f in frames):
                platform.append(head)
            elif all(re.search(r"swift_|\$s10Foundation|\$ss|malloc|realloc|posix_memalign|calloc", f) for f in frames):
                unattributed.append(head)
            else:
                library.append(block.strip())
    print(f"leak-report: {len(files)} report file(s); {len(fixture)} leak record(s) from the test fixtures' "
          f"Foundation.Process scaffolding; {len(platform)} made and dropped inside FoundationNetworking; "
          f"{len(unattributed)} unattributed (stack cut short inside Foundation); "
          f"{len(library)} from the library")
    for block in library[:20]:
        print(block, end="\n\n")
    return 1 if library else 0


if __name__ == "__main__":
    sys.exit(main())
