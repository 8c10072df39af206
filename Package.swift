// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ServerAPIKit",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "ServerAPIKit", targets: ["ServerAPIKit"]),
        .library(name: "ServerAPITesting", targets: ["ServerAPITesting"]),
        .library(name: "ServerAPIURLSession", targets: ["ServerAPIURLSession"]),
        .executable(name: "serverapi-example", targets: ["serverapi-example"]),
    ],
    targets: [
        .target(name: "ServerAPIKit", path: "Sources/ServerAPIKit"),
        .target(
            name: "ServerAPITesting",
            dependencies: ["ServerAPIKit"],
            path: "Backends/ServerAPITesting"
        ),
        .target(
            name: "ServerAPIURLSession",
            dependencies: ["ServerAPIKit"],
            path: "Backends/ServerAPIURLSession"
        ),
        .executableTarget(
            name: "serverapi-example",
            dependencies: ["ServerAPIKit", "ServerAPITesting"],
            path: "Sources/serverapi-example"
        ),
        .testTarget(
            name: "ServerAPIKitTests",
            dependencies: ["ServerAPIKit", "ServerAPITesting"],
            path: "Tests/ServerAPIKitTests"
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["ServerAPIKit", "ServerAPITesting", "ServerAPIURLSession"],
            path: "Tests/ConformanceTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Settings shared by every Swift target; SwiftPM refuses settings on system-library targets.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
