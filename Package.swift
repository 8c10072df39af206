// swift-tools-version:6.2
// 6.2: the tests use `weak let` (SE-0481), which older compilers reject.
import PackageDescription

let package = Package(
    name: "ServerAPIKit",
    // visionOS 2: what Mutex and Atomic (Synchronization) need, as the other four.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ServerAPIKit", targets: ["ServerAPIKit"]),
        .library(name: "ServerAPITesting", targets: ["ServerAPITesting"]),
        .library(name: "ServerAPICurl", targets: ["ServerAPICurl"]),
        .library(name: "ServerAPIMemoryCache", targets: ["ServerAPIMemoryCache"]),
        .library(name: "ServerAPIFileCache", targets: ["ServerAPIFileCache"]),
        .library(name: "ServerAPIURLSession", targets: ["ServerAPIURLSession"]),
        .executable(name: "serverapi-example", targets: ["serverapi-example"]),
        .executable(name: "sapi", targets: ["sapi"]),
        .executable(name: "sapi-full", targets: ["sapi-full"]),
    ],
    targets: [
        // zlib, for WebSocket compression (permessage-deflate): a system library, so the core keeps no package
        // dependency. Debian's zlib1g-dev; the Apple SDKs carry zlib.
        .target(name: "ServerAPIKit", dependencies: ["CZlib"], path: "Sources/ServerAPIKit"),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .target(
            name: "ServerAPITesting",
            dependencies: ["ServerAPIKit"],
            path: "Backends/ServerAPITesting"
        ),
        .systemLibrary(name: "CMallocInfo", path: "Sources/CMallocInfo"),
        .systemLibrary(
            name: "CCurl",
            path: "Backends/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        // For Linux and macOS: the iOS, tvOS, watchOS and visionOS SDKs have no libcurl.
        .target(
            name: "ServerAPICurl",
            dependencies: ["ServerAPIKit", "CCurl"],
            path: "Backends/ServerAPICurl"
        ),
        .target(
            name: "ServerAPIMemoryCache",
            dependencies: ["ServerAPIKit"],
            path: "Backends/ServerAPIMemoryCache"
        ),
        .target(
            name: "ServerAPIFileCache",
            dependencies: ["ServerAPIKit"],
            path: "Backends/ServerAPIFileCache"
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
        // The soak and chaos run (scripts/soak.sh); not a product.
        .executableTarget(
            name: "serverapi-soak",
            dependencies: [
                "ServerAPIKit", "ServerAPICurl", "ServerAPIURLSession",
                // glibc's mallinfo2; elsewhere the probe reports no allocator figures.
                .target(name: "CMallocInfo", condition: .when(platforms: [.linux])),
            ],
            path: "Sources/serverapi-soak"
        ),
        // The Autobahn|Testsuite client runner (Tests/Autobahn/README.md, scripts/autobahn.sh); not a product.
        .executableTarget(
            name: "serverapi-autobahn",
            dependencies: ["ServerAPIKit", "ServerAPICurl", "ServerAPIURLSession"],
            path: "Sources/serverapi-autobahn"
        ),
        // The command `sapi` runs, in a library both of its executables link; not a product. It keeps to
        // FoundationEssentials: what needs all of Foundation is in SapiFull.
        .target(
            name: "SapiCommand",
            dependencies: [
                "ServerAPIKit", "ServerAPIMemoryCache", "ServerAPIFileCache",
                .target(name: "ServerAPICurl", condition: .when(platforms: [.linux, .macOS])),
            ],
            path: "Sources/SapiCommand"
        ),
        // What only `sapi-full` links: the URLSession backend and HAR recording and replay (all of Foundation and
        // FoundationNetworking, which cost the lean `sapi` at every start); not a product.
        .target(
            name: "SapiFull",
            dependencies: ["SapiCommand", "ServerAPIKit", "ServerAPIURLSession", "ServerAPITesting"],
            path: "Sources/SapiFull"
        ),
        // `sapi` runs `sapi-full`, installed beside it, for `--backend urlsession`, `--har` and `--replay`.
        .executableTarget(name: "sapi", dependencies: ["SapiCommand"], path: "Sources/sapi"),
        .executableTarget(name: "sapi-full", dependencies: ["SapiCommand", "SapiFull"], path: "Sources/sapi-full"),
        // Helpers every test target shares (fixture processes, event waiters, scratch folders); not a product.
        .target(
            name: "ServerAPITestSupport",
            dependencies: ["ServerAPIKit"],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "SapiTests",
            dependencies: ["SapiCommand", "SapiFull", "sapi", "sapi-full", "ServerAPIKit", "ServerAPITestSupport"],
            path: "Tests/SapiTests"
        ),
        .testTarget(
            name: "ServerAPIKitTests",
            dependencies: ["ServerAPIKit", "ServerAPITesting", "ServerAPITestSupport"],
            path: "Tests/ServerAPIKitTests"
        ),
        .testTarget(
            name: "ServerAPICurlTests",
            dependencies: [
                "ServerAPIKit", "ServerAPITestSupport",
                .target(name: "ServerAPICurl", condition: .when(platforms: [.linux, .macOS])),
            ],
            path: "Tests/ServerAPICurlTests",
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "ServerAPICacheTests",
            dependencies: [
                "ServerAPIKit", "ServerAPITesting", "ServerAPIMemoryCache", "ServerAPIFileCache",
                "ServerAPITestSupport", "ServerAPIURLSession",
                .target(name: "ServerAPICurl", condition: .when(platforms: [.linux, .macOS])),
            ],
            path: "Tests/ServerAPICacheTests"
        ),
        .testTarget(
            name: "ServerAPITestingTests",
            dependencies: [
                "ServerAPIKit", "ServerAPITesting", "ServerAPIURLSession", "ServerAPICurl", "ServerAPITestSupport",
            ],
            path: "Tests/ServerAPITestingTests"
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "ServerAPIKit", "ServerAPITesting", "ServerAPIURLSession", "ServerAPITestSupport",
                "ServerAPIMemoryCache", .target(name: "ServerAPICurl", condition: .when(platforms: [.linux, .macOS])),
            ],
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
