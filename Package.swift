// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "kagami",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "kagami", targets: ["kagami"]),
        .library(name: "KagamiTesting", targets: ["KagamiTesting"]),
        .library(name: "KagamiKit", targets: ["KagamiKit"]),
        .library(name: "KagamiKitOpenAPI", targets: ["KagamiKitOpenAPI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/mattpolzin/OpenAPIKit", from: "6.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", exact: "0.12.1"),
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
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
        // JSON Schema (draft 4 and 2020-12) compiled once, validated many times.
        .target(name: "KagamiJSONSchema", dependencies: ["KagamiJSON"]),
        // One neutral contract model for every description format.
        .target(name: "KagamiContract", dependencies: ["KagamiJSON", "KagamiJSONSchema"]),
        // API Blueprint 1A with MSON into the contract model.
        .target(name: "KagamiBlueprint", dependencies: ["KagamiContract", "KagamiJSON"]),
        // OpenAPI 3.0/3.1 (JSON and YAML) into the contract model.
        .target(
            name: "KagamiOpenAPI",
            dependencies: [
                "KagamiContract", "KagamiJSON", "KagamiJSONSchema", "KagamiYAML", "KagamiURITemplate", "KagamiFlow",
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "OpenAPIKit30", package: "OpenAPIKit"),
                .product(name: "OpenAPIKitCompat", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // YAML text to a node tree or straight to JSON values, bounded in size, nesting and expanded aliases.
        .target(name: "KagamiYAML", dependencies: ["KagamiJSON", .product(name: "Yams", package: "Yams")]),
        // One value per HTTP exchange, with no networking types: everything else speaks flows.
        .target(name: "KagamiFlow"),
        // What Kagami writes out: notices and answers on the console, every byte to a descriptor.
        .target(name: "KagamiOutput"),
        // Kagami's root CA and the leaf certificates it signs for intercepted hosts.
        .target(
            name: "KagamiCertificates",
            dependencies: [
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The SwiftNIO engine: client connections, server connections, tunnels.
        .target(
            name: "KagamiProxy",
            dependencies: [
                "KagamiFlow", "KagamiCertificates", "KagamiRules", "KagamiControl", "KagamiScenarios", "KagamiGRPC", "CKagamiZlib",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        // Charles's tools as one ordered rule pipeline over flows: pure logic, no networking.
        .target(
            name: "KagamiRules",
            dependencies: ["KagamiFlow", "KagamiJSON", "KagamiYAML", "KagamiContentCoding", "KagamiGRPC", .product(name: "Yams", package: "Yams")]
        ),
        // What is decided about a running proxy without touching the network, shared by the engine
        // and the admin API: who may use it, where it may connect, the SSL Proxying list,
        // breakpoints and held exchanges, the WebSockets a message can be sent into.
        .target(name: "KagamiControl", dependencies: ["KagamiFlow", "KagamiRules"]),
        // Times the rule pipeline on a typical request (bench/rules/run.sh).
        .executableTarget(name: "rules-bench", dependencies: ["KagamiRules", "KagamiFlow"], path: "bench/rules/Sources"),
        // The inference accuracy benchmark's request generator and scorer (bench/infer/run.sh).
        .executableTarget(name: "infer-bench", dependencies: ["KagamiDescription", "KagamiContract", "KagamiJSON"], path: "bench/infer/Sources"),
        .executableTarget(name: "store-bench", dependencies: ["KagamiStore", "KagamiPostgresStore", "KagamiFlow", "KagamiJSON"], path: "bench/store/Sources"),
        // Two sessions of an app's traffic for bench/diff/run.sh.
        .executableTarget(name: "diff-bench", dependencies: ["KagamiStore", "KagamiFlow"], path: "bench/diff/Sources"),
        // The read tools of kagami mcp timed on a big session (bench/mcp/run.sh).
        .executableTarget(name: "mcp-bench", dependencies: ["KagamiMCP", "KagamiStore", "KagamiJSON"], path: "bench/mcp/Sources"),
        // WebSocket echo server and load client for bench/proxy/websocket.sh.
        .executableTarget(
            name: "ws-bench",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "bench/websocket/Sources"
        ),
        // Sessions: the FlowStore protocol and its SQLite driver.
        .target(
            name: "KagamiStore",
            dependencies: ["KagamiOutput", "KagamiFlow", "KagamiJSON", "KagamiJSONSchema", "KagamiContentCoding", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"), .product(name: "DequeModule", package: "swift-collections")]
        ),
        // Sessions shared by a team: the FlowStore protocol over a PostgreSQL server.
        .target(
            name: "KagamiPostgresStore",
            dependencies: ["KagamiOutput",
                "KagamiStore", "KagamiFlow",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // HTTP Archive (HAR 1.2) from and to flows.
        .target(name: "KagamiHAR", dependencies: ["KagamiFlow", "KagamiJSON", "KagamiContentCoding"]),
        // A recorded request as a curl command line that sends it again.
        .target(name: "KagamiCurl", dependencies: ["KagamiFlow", "KagamiGRPC", "KagamiJSON"]),
        // Repeat and Repeat Advanced: a recorded request sent again through a Kagami proxy.
        .target(
            name: "KagamiRepeat",
            dependencies: [
                "KagamiFlow",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]
        ),
        // For tests of Kagami and of apps that use it: an origin server on port 0, fixtures.
        .target(
            name: "KagamiTesting",
            dependencies: [
                "KagamiFlow", "KagamiCertificates",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // A description file (API Blueprint or OpenAPI, detected) read into the contract model.
        .target(name: "KagamiDescription", dependencies: ["KagamiContract", "KagamiBlueprint", "KagamiOpenAPI"]),
        // Exchanges checked against a description: matching, request and response validation,
        // coverage, reports; shared by the mock server and the proxy's contract check.
        .target(
            name: "KagamiContractCheck",
            dependencies: ["KagamiContract", "KagamiDescription", "KagamiFlow", "KagamiJSON", "KagamiJSONSchema", "KagamiURITemplate", "KagamiContentCoding", "KagamiGRPC"]
        ),
        // The one recording chain (store, live views, contract check) every server is given, and
        // the proxy built with it from its options.
        .target(name: "KagamiRecording", dependencies: ["KagamiFlow", "KagamiStore", "KagamiContractCheck"]),
        // The proxy built with that chain from its options, for `kagami proxy`, `kagami repeat`
        // and KagamiKit alike.
        .target(
            name: "KagamiRecordingProxy",
            dependencies: ["KagamiFlow", "KagamiStore", "KagamiContractCheck", "KagamiRecording", "KagamiProxy", "KagamiScenarios", "KagamiHAR", "KagamiMock"]
        ),
        // Scenarios: operations put into their empty, loading, error or offline state, and recorded
        // traffic answered back as a mock. Pure, no networking: flows in, answers out (the switch is
        // behind a lock).
        .target(
            name: "KagamiScenarios",
            dependencies: ["KagamiFlow", "KagamiJSON", "KagamiURITemplate", "KagamiContentCoding", "KagamiRules"]
        ),
        // The mock server and docs page served from a contract.
        .target(
            name: "KagamiMock",
            dependencies: ["KagamiOutput",
                "KagamiContract", "KagamiContractCheck", "KagamiDescription", "KagamiJSON", "KagamiJSONSchema", "KagamiURITemplate", "KagamiFlow",
                "KagamiRules", "KagamiScenarios", "KagamiControl", "KagamiGRPC",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The system zlib, to show gzip- and deflate-encoded bodies decoded.
        .systemLibrary(name: "CKagamiZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Content-Encoding undone (gzip, deflate) for display and export.
        .target(name: "KagamiContentCoding", dependencies: ["CKagamiZlib"]),
        // gRPC calls read back from flows: length-prefixed messages, Protocol Buffers decoded
        // with the names and types of a schema (descriptor sets, .proto files through protoc)
        // or without one, the status from the trailers.
        .target(
            name: "KagamiGRPC",
            dependencies: ["KagamiFlow", "KagamiContentCoding", "KagamiJSON", "KagamiContract", .product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        // The web UI and its JSON admin API (Hummingbird), with the page shipped as resources.
        .target(
            name: "KagamiUI",
            dependencies: [
                "KagamiFlow", "KagamiStore", "KagamiHAR", "KagamiJSON", "KagamiContentCoding", "KagamiContractCheck", "KagamiRecording",
                "KagamiControl", "KagamiCertificates", "KagamiRules", "KagamiScenarios", "KagamiCurl", "KagamiRepeat", "KagamiInfer", "KagamiGRPC", "KagamiDiff",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Web")]
        ),
        // Recorded exchanges into a draft description: path templates, merged schemas, OpenAPI and Blueprint writers.
        .target(
            name: "KagamiInfer",
            dependencies: ["KagamiFlow", "KagamiJSON", "KagamiContentCoding", .product(name: "OrderedCollections", package: "swift-collections")]
        ),
        // Two captures compared by operation: what changed in calls, shapes, statuses, values and
        // timings. Pure: flows in, findings and reports out.
        .target(
            name: "KagamiDiff",
            dependencies: [
                "KagamiFlow", "KagamiJSON", "KagamiInfer", "KagamiContractCheck", "KagamiURITemplate", "KagamiContentCoding", "KagamiGRPC",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // Proxy and mock run inside a test suite: port 0, rules, recorded flows, contract check;
        // no NIO types in its public API (Tests/KagamiKitTests/PublicSymbolsTests.swift).
        .target(
            name: "KagamiKit",
            dependencies: [
                "KagamiFlow", "KagamiRules", "KagamiProxy", "KagamiMock", "KagamiStore", "KagamiContractCheck", "KagamiDescription", "KagamiCertificates",
                "KagamiRecording", "KagamiRecordingProxy", "KagamiDiff", "KagamiScenarios", "KagamiHAR", "KagamiControl",
            ]
        ),
        // A swift-openapi-runtime transport: a generated client pointed at an in-process mock or
        // sent through an in-process proxy in one line.
        .target(
            name: "KagamiKitOpenAPI",
            dependencies: [
                "KagamiKit",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // `kagami mcp`: sessions, rules and the contract check as Model Context Protocol tools and
        // resources for coding agents; reads sessions through the store, writes through the admin API.
        .target(
            name: "KagamiMCP",
            dependencies: [
                "KagamiFlow", "KagamiStore", "KagamiJSON", "KagamiContentCoding", "KagamiContractCheck", "KagamiDescription",
                "KagamiCurl", "KagamiInfer", "KagamiDiff", "KagamiGRPC", "KagamiHAR", "KagamiUI", "KagamiOutput", "KagamiJSONSchema",
                .product(name: "MCP", package: "swift-sdk"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The commands; the executable only calls into this.
        .target(
            name: "KagamiCLI",
            dependencies: ["KagamiOutput",
                "KagamiJSON", "KagamiFlow", "KagamiProxy", "KagamiStore", "KagamiPostgresStore", "KagamiHAR", "KagamiCertificates", "KagamiCurl", "KagamiURITemplate", "KagamiJSONSchema",
                "KagamiContract", "KagamiBlueprint", "KagamiOpenAPI", "KagamiDescription", "KagamiContractCheck", "KagamiMock", "KagamiUI",
                "KagamiRules", "KagamiScenarios", "KagamiRepeat", "KagamiInfer", "KagamiRecording", "KagamiDiff", "KagamiMCP", "KagamiGRPC", "KagamiControl",
                "KagamiRecordingProxy",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "kagami", dependencies: ["KagamiCLI"]),

        .testTarget(name: "KagamiJSONTests", dependencies: ["KagamiJSON"]),
        .testTarget(name: "KagamiFlowTests", dependencies: ["KagamiFlow"]),
        .testTarget(name: "KagamiTestingTests", dependencies: ["KagamiTesting"]),
        .testTarget(
            name: "KagamiCertificatesTests",
            dependencies: [
                "KagamiCertificates", "KagamiTesting",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .testTarget(name: "KagamiCurlTests", dependencies: ["KagamiCurl", "KagamiFlow", "KagamiTesting"]),
        .testTarget(
            name: "KagamiRepeatTests",
            dependencies: [
                "KagamiRepeat", "KagamiCLI", "KagamiStore", "KagamiFlow", "KagamiJSON", "KagamiTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // One store suite run against every driver (SQLite, and PostgreSQL on a throwaway server).
        .testTarget(
            name: "KagamiStoreTests",
            dependencies: [
                "KagamiStore", "KagamiPostgresStore", "KagamiFlow", "KagamiOutput", "KagamiJSON", "KagamiTesting", "KagamiContentCoding",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(name: "KagamiMCPTests", dependencies: ["KagamiMCP", "KagamiFlow", "KagamiStore", "KagamiJSON", "KagamiTesting", "KagamiUI"]),
        .testTarget(name: "KagamiGRPCTests", dependencies: ["KagamiGRPC", "KagamiFlow", "KagamiJSON", "KagamiTesting"]),
        .testTarget(
            name: "KagamiDiffTests",
            dependencies: ["KagamiDiff", "KagamiFlow", "KagamiJSON", "KagamiContractCheck", "KagamiDescription", "KagamiStore", "KagamiTesting", "kagami"]
        ),
        .testTarget(
            name: "KagamiInferTests",
            dependencies: [
                "KagamiInfer", "KagamiFlow", "KagamiJSON", "KagamiJSONSchema", "KagamiDescription", "KagamiContract", "KagamiHAR", "KagamiStore", "KagamiCLI",
                "KagamiMock", "KagamiTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "KagamiRulesTests", dependencies: ["KagamiRules", "KagamiFlow", "KagamiJSON", "KagamiTesting", "KagamiContentCoding"]),
        .testTarget(
            name: "KagamiUITests",
            dependencies: [
                "KagamiUI", "KagamiFlow", "KagamiStore", "KagamiTesting", "KagamiJSON", "KagamiProxy", "KagamiRules", "KagamiRepeat", "KagamiRecording",
                "KagamiControl", "KagamiRecordingProxy", "KagamiCLI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "KagamiURITemplateTests", dependencies: ["KagamiURITemplate", "KagamiJSON", "KagamiTesting"]),
        .testTarget(name: "KagamiJSONSchemaTests", dependencies: ["KagamiJSONSchema", "KagamiCLI", "KagamiTesting"]),
        .testTarget(
            name: "KagamiContractTests",
            dependencies: [
                "KagamiContract", "KagamiBlueprint", "KagamiOpenAPI", "KagamiJSON", "KagamiJSONSchema", "KagamiYAML", "KagamiCLI", "KagamiDescription",
                "KagamiTesting",
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
            ],
            exclude: ["Fuzz", "Fixtures", "check_openapi.py"]
        ),
        // A URLSession client the proxy tests run as a child process.
        .executableTarget(name: "url-session-probe", path: "Tests/Probes/URLSessionProbe"),
        .testTarget(
            name: "KagamiProxyTests",
            dependencies: [
                "KagamiProxy", "KagamiStore", "KagamiPostgresStore", "KagamiTesting", "KagamiFlow", "KagamiHAR", "KagamiCertificates", "KagamiRules", "KagamiScenarios", "KagamiRepeat", "KagamiMock", "KagamiJSON", "KagamiGRPC", "KagamiKit", "KagamiRecording", "KagamiContractCheck", "url-session-probe", "CKagamiZlib",
                "KagamiControl", "KagamiRecordingProxy", "KagamiCurl",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "KagamiHARTests",
            dependencies: [
                "KagamiHAR", "KagamiFlow", "KagamiJSON", "KagamiJSONSchema", "KagamiStore", "KagamiTesting", "KagamiCLI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["Fixtures", "har-1.2.schema.json"]
        ),
        .testTarget(
            name: "KagamiContractCheckTests",
            dependencies: [
                "KagamiContractCheck", "KagamiDescription", "KagamiContract", "KagamiFlow", "KagamiJSON", "KagamiProxy", "KagamiStore", "KagamiRecording",
                "KagamiTesting", "KagamiHAR", "KagamiUI", "KagamiCertificates", "kagami", "KagamiRecordingProxy", "KagamiGRPC",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            exclude: ["Fixtures", "check_junit.py"]
        ),
        .testTarget(name: "KagamiScenariosTests", dependencies: ["KagamiScenarios", "KagamiFlow", "KagamiTesting", "KagamiStore", "KagamiJSON", "KagamiContentCoding", "KagamiRules"]),
        .testTarget(
            name: "KagamiMockTests",
            dependencies: [
                "KagamiMock", "KagamiContractCheck", "KagamiDescription", "KagamiContract", "KagamiJSON", "KagamiFlow", "KagamiTesting", "KagamiURITemplate", "KagamiScenarios",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            exclude: ["Fixtures"]
        ),
        // Uses public products only, as an app's test suite would.
        .testTarget(
            name: "KagamiKitTests",
            dependencies: ["KagamiKit", "KagamiTesting"],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
