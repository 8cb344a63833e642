// curl against a running mock, with the answer split into status, headers and body.
import Foundation
import KagamiJSON
import KagamiTesting

struct CurlAnswer {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: String

    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    var json: JSONValue? { try? JSONValue(parsing: body) }
}

enum MockClient {
    /// `options`: more of curl's options, such as `-F name=value` form fields.
    static func curl(_ method: String, _ url: String, headers: [String] = [], body: String? = nil, options: [String] = []) async throws -> CurlAnswer {
        var arguments = ["-s", "-i", "--max-time", "60", "-X", method] + options
        if method == "HEAD" { arguments = ["-s", "-I", "--max-time", "60"] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        arguments.append(url)
        let result = try await CommandLineClient.curl.run(arguments)
        let text = result.stdoutText
        guard let split = text.range(of: "\r\n\r\n") else {
            return CurlAnswer(status: 0, headers: [], body: "curl: \(result.stderr)")
        }
        var lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        let status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return CurlAnswer(status: status, headers: headers, body: String(text[split.upperBound...]))
    }

    static var conformanceDirectory: URL {
        if let configured = ProcessInfo.processInfo.environment["KAGAMI_CONFORMANCE_DIR"] {
            return URL(fileURLWithPath: configured)
        }
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("shared/conformance")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: "/work/shared/conformance")
    }

    static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    }
}
