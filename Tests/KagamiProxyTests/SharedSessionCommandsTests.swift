import Foundation
import KagamiTesting
import Testing

/// The commands that read a session (`validate`, `infer`) reading a named session of the shared
/// store that a running `kagami proxy --store` recorded, as they read a session file.
@Suite struct SharedSessionCommandsTests {
    /// A session of the tests' PostgreSQL server holding `requests` exchanges with the echo
    /// origin, recorded by a real proxy.
    static func recordedSession(_ origin: OriginServer, requests: [String], extraArguments: [String] = [], curlOptions: [String] = []) async throws -> (url: String, name: String) {
        let url = try ServeTests.postgresURL()
        let name = "commands-" + UUID().uuidString
        let proxy = try await KagamiProcess.start(
            ["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--store", url, "--session", name] + extraArguments)
        defer { proxy.stop() }
        for path in requests {
            let status = try await CommandLineClient.curl.run(
                ["-s", "-x", "http://127.0.0.1:\(proxy.port)", "-o", "/dev/null", "-w", "%{http_code}"] + curlOptions + [origin.baseURL + path])
            #expect(status.stdoutText == "200")
        }
        return (url, name)
    }

    @Test func validateAndInferReadASessionOfTheSharedStore() async throws {
        let origin = try await OriginServer.start()
        let (url, name) = try await Self.recordedSession(origin, requests: ["/echo?page=1", "/echo?page=2"])
        let folder = NSTemporaryDirectory() + "kagami-commands-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The echo origin answers `"bodySize":0`: a description saying it is a string fails
        // each recorded exchange.
        let contract = folder + "/echo.yaml"
        try Data("""
            openapi: 3.1.0
            info: {title: echo, version: "1"}
            servers: [{url: "\(origin.baseURL)"}]
            paths:
              /echo:
                get:
                  responses:
                    "200":
                      description: the request as received
                      content:
                        application/json:
                          schema:
                            type: object
                            required: [method, bodySize]
                            properties:
                              method: {type: string}
                              bodySize: {type: string}

            """.utf8).write(to: URL(fileURLWithPath: contract))
        let kagami = CommandLineClient(try KagamiProcess.binary())

        let checked = try await kagami.run(["validate", "--contract", contract, "--store", url, "--session", name, "--format", "json"])
        #expect(checked.status == 1, "\(checked.stderr)")
        let report = try JSONSerialization.jsonObject(with: checked.stdout) as? [String: Any]
        let text = String(decoding: checked.stdout, as: UTF8.self)
        #expect(report != nil)
        #expect(text.contains("bodySize"))
        #expect(text.components(separatedBy: "/echo?page=").count - 1 >= 2)

        let drafted = try await kagami.run(["infer", "--store", url, "--session", name])
        #expect(drafted.status == 0, "\(drafted.stderr)")
        #expect(drafted.stdoutText.contains("  /echo:\n"))
        #expect(drafted.stdoutText.contains("name: page"))
        #expect(drafted.stdoutText.contains("- url: \"\(origin.baseURL)\""))

        // A session the store doesn't hold: the reason, and validate's "unreadable input" status.
        let missing = "no-such-\(UUID().uuidString)"
        let notThere = try await kagami.run(["validate", "--contract", contract, "--store", url, "--session", missing])
        #expect(notThere.status == 2)
        #expect(notThere.stderr.contains("no session named \(missing)"))
        let inferMissing = try await kagami.run(["infer", "--store", url, "--session", missing])
        #expect(inferMissing.status != 0)
        #expect(inferMissing.stderr.contains("no session named \(missing)"))
        // --store names a session: without one, or with a HAR file instead, the usage error says so.
        let noSession = try await kagami.run(["infer", "--store", url])
        #expect(noSession.status != 0)
        #expect(noSession.stderr.contains("--store URL --session NAME"))
        try await origin.stop()
    }
}
