// swift-tools-version:6.0
import PackageDescription

// Coverage-guided fuzzers (libFuzzer) for every parser of untrusted bytes in ServerAPIKit, `sapi` and the
// backends. A package of its own so that the main package stays dependency-free and its build and tests are
// not slowed: build and run it with `scripts/fuzz.sh`, which passes `-sanitize=fuzzer,address`. One
// executable holds every harness (one link instead of one per harness); `FUZZ_HARNESS` picks the harness.
// Internal parsers are reached with `@testable import`: debug builds enable testability.
let package = Package(
    name: "ServerAPIFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "ServerAPIKit", path: "..")],
    targets: [
        .executableTarget(
            name: "ParserFuzzer",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
                .product(name: "ServerAPIFileCache", package: "ServerAPIKit"),
                "SapiParsers", "CFuzzerDriver",
            ]
        ),
        // Declares libFuzzer's `LLVMFuzzerRunDriver`: the executable has a `main` of its own (SwiftPM gives
        // every executable one), which hands over to libFuzzer.
        .target(name: "CFuzzerDriver"),
        // `sapi`'s pure parsers, compiled from the very files `sapi` builds (symbolic links to
        // Sources/sapi): an executable target cannot be imported by another package.
        .target(name: "SapiParsers"),
    ],
    swiftLanguageModes: [.v6]
)
