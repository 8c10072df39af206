# shellcheck shell=bash
# The flags of the one release build that scripts/test.sh, demo.sh, soak.sh, autobahn.sh and bench-startup.sh
# share (sourced by each). SwiftPM keeps one build per configuration folder: a build of .build/release with other
# flags compiles everything again and replaces the other's. `-enable-testing` because the test suites run in release
# too, and their `@testable import`s need it; it changes no behaviour of the code.
RELEASE_BUILD=(-c release -Xswiftc -enable-testing -Xswiftc -warnings-as-errors)
