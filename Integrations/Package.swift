// swift-tools-version:6.0
import PackageDescription

// ServerAPIKit inside a server-side Swift app: an OpenAPI `ClientTransport`, swift-log, swift-metrics and
// swift-distributed-tracing bridges, and the manager as a swift-service-lifecycle service. A package of its own so that the library (the package one folder up) never
// depends on anything these use.
let package = Package(
    name: "ServerAPIKitIntegrations",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "ServerAPIOpenAPI", targets: ["ServerAPIOpenAPI"]),
        .library(name: "ServerAPILogging", targets: ["ServerAPILogging"]),
        .library(name: "ServerAPIMetrics", targets: ["ServerAPIMetrics"]),
        .library(name: "ServerAPITracing", targets: ["ServerAPITracing"]),
        .library(name: "ServerAPIServiceLifecycle", targets: ["ServerAPIServiceLifecycle"]),
    ],
    dependencies: [
        .package(name: "ServerAPIKit", path: ".."),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "ServerAPIOpenAPI",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "ServerAPILogging",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "ServerAPIMetrics",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "ServerAPITracing",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "ServerAPIServiceLifecycle",
            dependencies: [
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A server app in miniature that the lifecycle tests start and stop with SIGTERM; not a product.
        .executableTarget(
            name: "serverapi-service-probe",
            dependencies: [
                "ServerAPIServiceLifecycle",
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ServerAPIServiceProbe"
        ),
        // OpenAPI/: a client that swift-openapi-generator wrote from OpenAPI/openapi.yaml (by
        // scripts/generate-openapi.sh; the generated code is committed) calls the local httpbin through the transport.
        // Observability/: the three bridges, checked with their packages' test kits.
        // Lifecycle/: the manager's service, in a service group and in a child process stopped with SIGTERM.
        .testTarget(
            name: "IntegrationsTests",
            dependencies: [
                "ServerAPIOpenAPI", "ServerAPILogging", "ServerAPIMetrics", "ServerAPITracing",
                "ServerAPIServiceLifecycle",
                .product(name: "ServerAPIKit", package: "ServerAPIKit"),
                .product(name: "ServerAPICurl", package: "ServerAPIKit"),
                .product(name: "ServerAPIURLSession", package: "ServerAPIKit"),
                .product(name: "ServerAPITesting", package: "ServerAPIKit"),
                .product(name: "ServerAPIMemoryCache", package: "ServerAPIKit"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            exclude: ["OpenAPI/openapi.yaml", "OpenAPI/openapi-generator-config.yaml"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
