import Foundation
import KagamiTesting
import Testing

/// `sslmode=verify-full` in the store's URL: the server's certificate must chain to the CA of
/// `sslrootcert=` and name the host (by name, or by address for 127.0.0.1). Against a cluster
/// of the test's own with TLS on and a certificate made by openssl.
@Suite struct SharedStoreTLSTests {
    @Test func verifyFullConnectsWithTheRightCAAndRefusesAWrongOne() async throws {
        try await ThrowawayCluster.with(ssl: true) { cluster in
            let authority = try #require(cluster.certificateAuthority)
            let origin = try await OriginServer.start()
            let kagami = try CommandLineClient.kagami()
            let name = "tls-" + UUID().uuidString
            let byAddress = cluster.url + "?sslmode=verify-full&sslrootcert=\(authority)"
            let byName = cluster.url.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:") + "?sslmode=verify-full&sslrootcert=\(authority)"

            // Recording over verified TLS, by address; reading back by name.
            let proxy = try await KagamiProcess.start(["proxy", "--port", "0", "--no-ui", "--no-ssl-proxying", "--store", byAddress, "--session", name])
            #expect(proxy.output.contains("?sslmode=verify-full"))
            let sent = try await CommandLineClient.curl.run(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", "http://127.0.0.1:\(proxy.port)", "\(origin.baseURL)/echo?tls=1"])
            #expect(sent.stdoutText == "200")
            proxy.stop()
            let read = try await kagami.run(["flows", "--store", byName, "--session", name])
            #expect(read.status == 0, "\(read.stderr)")
            #expect(read.stdoutText.contains("GET 200 \(origin.baseURL)/echo?tls=1"))

            // The server's connections really are TLS.
            let psql = try await CommandLineClient("/usr/bin/psql").run(
                ["-At", byAddress.replacingOccurrences(of: "postgres://", with: "postgresql://"), "-c", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"])
            #expect(psql.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "t")

            // A CA that didn't sign the server's certificate: refused, saying why.
            let folder = NSTemporaryDirectory() + "kagami-tls-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let made = try await CommandLineClient("/usr/bin/openssl").run([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=Some other CA",
                "-keyout", folder + "/other.key", "-out", folder + "/other.pem",
            ])
            #expect(made.status == 0, "\(made.stderr)")
            for url in [cluster.url + "?sslmode=verify-full&sslrootcert=\(folder)/other.pem", cluster.url + "?sslmode=verify-ca&sslrootcert=\(folder)/other.pem"] {
                let refused = try await kagami.run(["proxy", "--port", "0", "--no-ui", "--store", url, "--session", name])
                #expect(refused.status != 0)
                #expect(refused.stderr.contains("the server's TLS certificate could not be verified"), "\(refused.stderr)")
                let notRead = try await kagami.run(["flows", "--store", url, "--session", name])
                #expect(notRead.status != 0)
                #expect(notRead.stderr.contains("could not be verified"))
            }
            // A CA file that isn't there is named before anything connects.
            let missing = try await kagami.run(["flows", "--store", cluster.url + "?sslmode=verify-full&sslrootcert=\(folder)/none.pem", "--session", name])
            #expect(missing.stderr.contains("sslrootcert=\(folder)/none.pem"))
            #expect(missing.stderr.contains("no readable file"))
            try await origin.stop()
        }
    }
}
