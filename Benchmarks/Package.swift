// swift-tools-version:6.0
import PackageDescription

// The benchmarks live in their own package so that the library never depends on anything they use.
let package = Package(
    name: "ServerAPIKitBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "ServerAPIKit", path: "..")
    ],
    targets: [
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
    ],
    swiftLanguageModes: [.v6]
)
