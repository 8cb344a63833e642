// swift-tools-version: 6.0
// The bare Hummingbird route the mock benchmark compares against; a package of its own so
// a baseline build never mixes with the product build.
import PackageDescription

let package = Package(
    name: "HummingbirdBaseline",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "HummingbirdBaseline",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
