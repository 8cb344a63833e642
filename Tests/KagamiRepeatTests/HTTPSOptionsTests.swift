import ArgumentParser
import Foundation
import KagamiTesting
import Testing
@testable import KagamiCLI

/// The HTTPS options `proxy` and `repeat` share, and what the proxy's start-up line says of them.
@Suite struct HTTPSOptionsTests {
    /// The start-up line names the list in force and says whether its file is read or yet to
    /// be written (it is written when the list is first saved in the web UI).
    @Test func theStartUpLineSaysWhatIsDecryptedAndWhereTheListIsKept() throws {
        let folder = try TemporaryFolder.make("https-options")
        let file = folder.appendingPathComponent("ssl.json").path
        let caDir = folder.appendingPathComponent("ca").path
        let missing = try HTTPSOptions.parse(["--ca-dir", caDir, "--ssl-proxying-file", file, "--ssl-exclude", "*.apple.com"])
        let list = try #require(try missing.interception()).sslProxying
        #expect(missing.describe(list) == "all hosts except *.apple.com (list written to \(file) when changed in the web UI)")

        try Data(#"{"include": ["api.example.com:8443"], "exclude": []}"#.utf8).write(to: URL(fileURLWithPath: file))
        let present = try HTTPSOptions.parse(["--ca-dir", caDir, "--ssl-proxying-file", file, "--ssl-exclude", "*.apple.com"])
        let read = try #require(try present.interception()).sslProxying
        #expect(present.describe(read) == "api.example.com:8443 (list read from \(file))")

        let plain = try HTTPSOptions.parse(["--ca-dir", caDir])
        #expect(plain.describe(try #require(try plain.interception()).sslProxying) == "all hosts")
    }

    @Test func upstreamTrustOptionsAreSpelledAsForTheProxy() throws {
        let options = try HTTPSOptions.parse(["--upstream-ca", "~/corp.pem", "--insecure-upstream"])
        #expect(options.upstreamTrust.upstreamCA == ["~/corp.pem"])
        let expanded = try #require(options.upstreamTrust.trustRootFiles.first)
        #expect(expanded.hasPrefix("/") && expanded.hasSuffix("/corp.pem"))
        #expect(options.upstreamTrust.insecureUpstream)
    }
}

/// `kagami template expand --vars FILE` reads a pipe to its end, not by its size.
@Suite struct TemplateVariablesTests {
    @Test func variablesComeFromStandardInput() async throws {
        let result = try await CommandLineClient(try CommandLineClient.kagamiPath())
            .run(["template", "expand", "/users/{id}{?fields}", "--vars", "/dev/stdin"], stdin: Data(#"{"id": 42, "fields": "name"}"#.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText == "/users/42?fields=name\n")
    }
}
