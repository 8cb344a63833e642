import Foundation
import KagamiTesting
import Testing

/// `kagami serve` beyond loopback: every request needs a token, the server's own or a user's
/// from the store (`kagami serve token add NAME --read|--write`), kept there hashed; read
/// tokens browse and export, write tokens also import and delete. Checked with curl against a
/// real `kagami serve` listening on every address (reached on 127.0.0.1).
@Suite struct ServeAccessTests {
    @Test func usersTokensGiveReadOrWriteRights() async throws {
        let origin = try await OriginServer.start()
        let (url, name) = try await KagamiProcess.recordSession(origin, requests: ["/echo?n=1", "/echo?n=2"])
        let kagami = try CommandLineClient.kagami()
        let suffix = UUID().uuidString.prefix(8)
        func addToken(_ user: String, _ right: String) async throws -> String {
            let made = try await kagami.run(["serve", "token", "add", user, right, "--store", url])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.stderr.contains("not shown again"))
            return made.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let reader = try await addToken("reader-\(suffix)", "--read")
        let writer = try await addToken("writer-\(suffix)", "--write")
        #expect(reader.hasPrefix("kagami_") && reader.count == 7 + 64)
        #expect(reader != writer)
        let again = try await kagami.run(["serve", "token", "add", "reader-\(suffix)", "--write", "--store", url])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already has a token named reader-\(suffix)"))
        let listed = try await kagami.run(["serve", "token", "list", "--store", url]).stdoutText
        #expect(listed.contains("reader-\(suffix)\tread\t"))
        #expect(listed.contains("writer-\(suffix)\twrite\t"))
        #expect(!listed.contains(reader))
        // The store keeps the SHA-256 of the secret, never the secret.
        let stored = try await CommandLineClient(URL(fileURLWithPath: "/usr/bin/psql").path).run(
            ["-At", url, "-c", "SELECT encode(secret_sha256, 'hex') FROM access_token WHERE name = 'reader-\(suffix)'"])
        let digest = try await CommandLineClient(URL(fileURLWithPath: "/usr/bin/sha256sum").path).run([], stdin: Data(reader.utf8))
        #expect(stored.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == String(digest.stdoutText.prefix(64)))

        let serve = try await KagamiProcess.start(["serve", "--store", url, "--host", "0.0.0.0", "--port", "0"])
        defer { serve.stop() }
        let base = "http://127.0.0.1:\(serve.port)"
        func status(_ path: String, _ options: [String] = []) async throws -> String {
            try await CommandLineClient.curl.run(["-s", "-o", "/dev/null", "-w", "%{http_code}"] + options + [base + path]).stdoutText
        }
        func bearer(_ token: String) -> [String] { ["-H", "Authorization: Bearer \(token)"] }
        let session = "/sessions/\(name)"

        // No token, or one the store doesn't know.
        #expect(try await status("/api/sessions") == "401")
        #expect(try await status("\(session)/api/flows") == "401")
        #expect(try await status("/api/sessions", bearer("kagami_" + String(repeating: "0", count: 64))) == "401")

        // A read token browses and exports...
        #expect(try await status("/api/sessions", bearer(reader)) == "200")
        #expect(try await status("\(session)/api/flows", bearer(reader)) == "200")
        let har = try await CommandLineClient.curl.run(["-s"] + bearer(reader) + [base + "\(session)/api/export.har"]).stdout
        let entries = ((try JSONSerialization.jsonObject(with: har) as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(entries?.count == 2)
        let flows = try JSONSerialization.jsonObject(with: try await CommandLineClient.curl.run(["-s"] + bearer(reader) + [base + "\(session)/api/flows"]).stdout) as? [String: Any]
        let id = try #require((flows?["flows"] as? [[String: Any]])?.first?["id"] as? String)
        let json = ["-H", "Content-Type: application/json"]
        #expect(try await status("\(session)/api/export.har", bearer(reader) + json + ["-X", "POST", "-d", #"{"ids":["\#(id)"]}"#]) == "200")
        // ...but neither imports nor deletes.
        let archive = folderFile(har)
        defer { try? FileManager.default.removeItem(atPath: archive) }
        let refusedImport = try await CommandLineClient.curl.run(
            ["-s", "-w", "\n%{http_code}"] + bearer(reader) + json + ["--data-binary", "@\(archive)", base + "\(session)/api/import.har"]).stdoutText
        #expect(refusedImport.hasSuffix("\n403"))
        #expect(refusedImport.contains("may only read"))
        #expect(try await status("\(session)/api/flows", bearer(reader) + ["-X", "DELETE"]) == "403")

        // ?token= once, then the cookie it sets.
        let jar = NSTemporaryDirectory() + "kagami-jar-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: jar) }
        #expect(try await status("/api/sessions?token=\(reader)", ["-c", jar]) == "200")
        #expect(try await status("\(session)/api/flows", ["-b", jar]) == "200")

        // A write token imports and deletes, and writes no file on the serve host.
        let written = NSTemporaryDirectory() + "kagami-serve-must-not-write-" + UUID().uuidString
        let save = try await CommandLineClient.curl.run(
            ["-s", "-w", "\n%{http_code}"] + bearer(writer) + json
                + ["--data-binary", #"{"path":"\#(written)","overwrite":true}"#, base + "\(session)/api/flows/\(id)/response/save"]).stdoutText
        #expect(save.hasSuffix("\n403"), "\(save)")
        #expect(save.contains("writes no file on its host"))
        #expect(!FileManager.default.fileExists(atPath: written))
        #expect(try await status("\(session)/api/import.har", bearer(writer) + json + ["--data-binary", "@\(archive)"]) == "200")
        let total = try JSONSerialization.jsonObject(with: try await CommandLineClient.curl.run(["-s"] + bearer(writer) + [base + "\(session)/api/flows"]).stdout) as? [String: Any]
        #expect(total?["total"] as? Int == 4)
        #expect(try await status("\(session)/api/flows", bearer(writer) + ["-X", "DELETE"]) == "200")

        // A removed token stops working (each answer is remembered for 10 seconds at most).
        #expect(try await kagami.run(["serve", "token", "remove", "reader-\(suffix)", "--store", url]).status == 0)
        let refused = try await eventually(attempts: 120, every: .milliseconds(250)) {
            try await status("/api/sessions", bearer(reader)) == "401"
        }
        #expect(refused)
        #expect(try await status("/api/sessions", bearer(writer)) == "200")
        _ = try await kagami.run(["serve", "token", "remove", "writer-\(suffix)", "--store", url])
        try await origin.stop()
    }

    private func folderFile(_ data: Data) -> String {
        let path = NSTemporaryDirectory() + "kagami-archive-" + UUID().uuidString + ".har"
        _ = FileManager.default.createFile(atPath: path, contents: data)
        return path
    }
}
