// swift-tools-version:6.0
import PackageDescription

// The benchmarks live in their own package so that the library never depends on anything they use.
let package = Package(
    name: "ServerAPIKitBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "ServerAPIKit", path: ".."),
        // Only the transport and streaming comparisons use it, as the reference client.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // async-http-client's TLS; the HTTP/2 row tells it to trust the local server's CA.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        // The WebSocket comparison's server (NIOWebSocket's upgrader) and its reference client.
        .package(url: "https://github.com/apple/swift-nio", from: "2.78.0"),
        .package(url: "https://github.com/vapor/websocket-kit", exact: "2.16.2"),
    ],
    targets: [
        // What every benchmark reads of its own process: CPU time and resident memory.
        .target(name: "BenchSupport", path: "Sources/BenchSupport"),
        .executableTarget(
            name: "serverapi-bench",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPITesting", package: "ServerAPIKit"),
            ],
            path: "Sources/serverapi-bench"
        ),
        .executableTarget(
            name: "serverapi-cache-bench",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPIMemoryCache", package: "ServerAPIKit"),
                .product(name: "ServerAPIFileCache", package: "ServerAPIKit"),
                .product(name: "ServerAPITesting", package: "ServerAPIKit"),
            ],
            path: "Sources/serverapi-cache-bench"
        ),
        .executableTarget(
            name: "serverapi-transport-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
                .product(name: "ServerAPIURLSession", package: "ServerAPIKit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/serverapi-transport-bench"
        ),
        // No async-http-client: scripts/bench-cancel.sh builds only this product, in well under a minute.
        .executableTarget(
            name: "serverapi-cancel-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
                .product(name: "ServerAPIURLSession", package: "ServerAPIKit"),
            ],
            path: "Sources/serverapi-cancel-bench"
        ),
        // No async-http-client: scripts/bench-resilience.sh builds only this product.
        .executableTarget(
            name: "serverapi-resilience-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
            ],
            path: "Sources/serverapi-resilience-bench"
        ),
        // No SwiftNIO: valgrind 3.19 cannot read a binary that links it, and this one is run under callgrind
        // (scripts/bench-transports.sh --instructions).
        .executableTarget(
            name: "serverapi-curl-count",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
            ],
            path: "Sources/serverapi-curl-count"
        ),
        .executableTarget(
            name: "serverapi-stream-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
                .product(name: "ServerAPIURLSession", package: "ServerAPIKit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Sources/serverapi-stream-bench"
        ),
        // The only product with websocket-kit: scripts/bench-websocket.sh builds it alone. Both the client under
        // test and the server it talks to (`serve`, in a process of its own) are this executable.
        // zlib for the WebSocket server's compressed rows (Debian's zlib1g-dev, as the library's own CZlib).
        .systemLibrary(
            name: "CZlibBench", path: "Sources/CZlibBench", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .executableTarget(
            name: "serverapi-websocket-bench",
            dependencies: [
                "BenchSupport",
                "CZlibBench",
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
                .product(name: "WebSocketKit", package: "websocket-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Sources/serverapi-websocket-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
