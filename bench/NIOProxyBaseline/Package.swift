// swift-tools-version: 6.0
// The least HTTP/1.1 reverse proxy SwiftNIO makes: what the proxy benchmark measures Kagami's
// own cost against (same framework, no capture, no rules). A package of its own so a baseline
// build never mixes with the product build.
import PackageDescription

let package = Package(
    name: "NIOProxyBaseline",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "NIOProxyBaseline",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
