// swift-tools-version:6.0
import PackageDescription

// Benchmarks live in their own package so that the main package keeps no dependencies.
let package = Package(
    name: "ServerAPIKitBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    dependencies: [
        .package(name: "ServerAPIKit", path: "..")
    ],
    targets: [
        .executableTarget(
            name: "serverapi-cache-bench",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPIMemoryCache", package: "ServerAPIKit"),
                .product(name: "ServerAPIFileCache", package: "ServerAPIKit"),
            ],
            path: "Sources/serverapi-cache-bench"
        )
    ],
    swiftLanguageModes: [.v6]
)
