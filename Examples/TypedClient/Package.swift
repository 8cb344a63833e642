// swift-tools-version: 6.0
// A typed Swift client generated (swift-openapi-generator's build plugin) from the OpenAPI form
// of notes.apib, tested against `kagami mock notes.apib`.
import PackageDescription

let package = Package(
    name: "TypedClient",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", exact: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", exact: "1.5.0"),
    ],
    targets: [
        .target(
            name: "NotesClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            ],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .testTarget(name: "NotesClientTests", dependencies: ["NotesClient"]),
    ],
    swiftLanguageModes: [.v6]
)
