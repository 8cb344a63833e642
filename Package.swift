// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "kagami",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "kagami", targets: ["kagami"]),
        .library(name: "KagamiJSON", targets: ["KagamiJSON"]),
        .library(name: "KagamiContract", targets: ["KagamiContract"]),
        .library(name: "KagamiBlueprint", targets: ["KagamiBlueprint"]),
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
        // One neutral contract model for every description format.
        .target(name: "KagamiContract", dependencies: ["KagamiJSON"]),
        // API Blueprint 1A with MSON into the contract model.
        .target(name: "KagamiBlueprint", dependencies: ["KagamiContract", "KagamiJSON"]),
        // The commands; the executable only calls into this.
        .target(
            name: "KagamiCLI",
            dependencies: [
                "KagamiJSON", "KagamiContract", "KagamiBlueprint",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "kagami", dependencies: ["KagamiCLI"]),

        .testTarget(name: "KagamiJSONTests", dependencies: ["KagamiJSON"]),
        .testTarget(
            name: "KagamiContractTests",
            dependencies: ["KagamiContract", "KagamiBlueprint", "KagamiJSON"],
            exclude: ["Fuzz"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
