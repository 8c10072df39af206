// swift-tools-version:6.0
import PackageDescription

// A tiny Hummingbird app that calls an upstream through ServerAPIKit with the logging, metrics and tracing
// bridges on. A package of its own so that building and testing the bridges does not build Hummingbird.
let package = Package(
    name: "ServerAPIKitHummingbirdExample",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "ServerAPIKit", path: "../.."),
        .package(name: "ServerAPIKitIntegrations", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "serverapi-hummingbird-example",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
                .product(name: "ServerAPILogging", package: "ServerAPIKitIntegrations"),
                .product(name: "ServerAPIMetrics", package: "ServerAPIKitIntegrations"),
                .product(name: "ServerAPITracing", package: "ServerAPIKitIntegrations"),
                .product(name: "ServerAPIServiceLifecycle", package: "ServerAPIKitIntegrations"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
