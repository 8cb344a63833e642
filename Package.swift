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
        .library(name: "KagamiOpenAPI", targets: ["KagamiOpenAPI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/mattpolzin/OpenAPIKit", from: "6.4.0"),
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
        // OpenAPI 3.0/3.1 (JSON and YAML) into the contract model.
        .target(
            name: "KagamiOpenAPI",
            dependencies: [
                "KagamiContract", "KagamiJSON",
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "OpenAPIKit30", package: "OpenAPIKit"),
                .product(name: "OpenAPIKitCompat", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The commands; the executable only calls into this.
        .target(
            name: "KagamiCLI",
            dependencies: [
                "KagamiJSON", "KagamiContract", "KagamiBlueprint", "KagamiOpenAPI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "kagami", dependencies: ["KagamiCLI"]),

        .testTarget(name: "KagamiJSONTests", dependencies: ["KagamiJSON"]),
        .testTarget(
            name: "KagamiContractTests",
            dependencies: ["KagamiContract", "KagamiBlueprint", "KagamiOpenAPI", "KagamiJSON", "KagamiCLI"],
            exclude: ["Fuzz", "Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
