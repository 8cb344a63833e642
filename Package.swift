// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "kagami",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "kagami", targets: ["kagami"]),
        .library(name: "KagamiJSON", targets: ["KagamiJSON"]),
        .library(name: "KagamiJSONSchema", targets: ["KagamiJSONSchema"]),
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
        // JSON Schema (draft 4 and 2020-12) compiled once, validated many times.
        .target(name: "KagamiJSONSchema", dependencies: ["KagamiJSON"]),
        // The commands; the executable only calls into this.
        .target(
            name: "KagamiCLI",
            dependencies: [
                "KagamiJSON",
                "KagamiJSONSchema",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "kagami", dependencies: ["KagamiCLI"]),

        .testTarget(name: "KagamiJSONTests", dependencies: ["KagamiJSON"]),
        .testTarget(name: "KagamiJSONSchemaTests", dependencies: ["KagamiJSONSchema", "KagamiCLI"]),
    ],
    swiftLanguageModes: [.v6]
)
