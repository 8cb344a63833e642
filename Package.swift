// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "kagami",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "kagami", targets: ["kagami"]),
        .library(name: "KagamiJSON", targets: ["KagamiJSON"]),
        .library(name: "KagamiURITemplate", targets: ["KagamiURITemplate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // Plain JSON values with ordered objects; no Foundation types at the surface.
        .target(
            name: "KagamiJSON",
            dependencies: [.product(name: "OrderedCollections", package: "swift-collections")]
        ),
        // RFC 6570 URI templates: parse, expand, and match requests back to variables.
        .target(
            name: "KagamiURITemplate",
            dependencies: ["KagamiJSON", .product(name: "OrderedCollections", package: "swift-collections")]
        ),
        // The commands; the executable only calls into this.
        .target(
            name: "KagamiCLI",
            dependencies: [
                "KagamiJSON",
                "KagamiURITemplate",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "kagami", dependencies: ["KagamiCLI"]),

        .testTarget(name: "KagamiJSONTests", dependencies: ["KagamiJSON"]),
        .testTarget(name: "KagamiURITemplateTests", dependencies: ["KagamiURITemplate", "KagamiJSON"]),
    ],
    swiftLanguageModes: [.v6]
)
