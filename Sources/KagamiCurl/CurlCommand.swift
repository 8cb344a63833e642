import Foundation
import KagamiFlow

/// A curl command line that sends a recorded request again: same method, URL, header fields
/// (in order, duplicates and empty values included) and body bytes, quoted for a POSIX shell
/// (bash for `$'…'`).
public struct CurlCommand: Sendable {
    /// What curl receives, one element per argument, before shell quoting.
    public private(set) var arguments: [String] = []
    /// Bytes fed to curl on standard input (`--data-binary @-`), for bodies an argument can't
    /// carry: ones with NUL bytes, or starting with `@`.
    public private(set) var standardInput: Data?
    private var bodyArgumentIndex: Int?
    private var bodyData = Data()

    /// Headers curl writes on its own unless told otherwise; a request without them must say so.
    private static let curlDefaults = ["Host", "User-Agent", "Accept"]

    public init(_ request: FlowRequest) {
        // No URL normalisation (`/a/../b`), no globbing of `[]{}`: the target goes as recorded.
        arguments = ["curl", "--path-as-is", "--globoff"]
        let version = request.version.uppercased()
        let http2 = version.hasPrefix("HTTP/2")
        switch version {
        case "HTTP/1.0": arguments.append("--http1.0")
        case "HTTP/1.1" where request.scheme == "https": arguments.append("--http1.1")
        case _ where http2: arguments.append("--http2")
        default: break
        }
        let hasBody = request.body.size > 0 || request.body.keptCount > 0
        if request.method == "HEAD" {
            // `-X HEAD` would make curl wait for a body that never comes.
            arguments.append("--head")
        } else if request.method != "GET" || hasBody {
            arguments += ["--request", request.method]
        }
        if let encodings = request.headers["Accept-Encoding"], ["gzip", "deflate", "br", "zstd"].contains(where: { encodings.lowercased().contains($0) }) {
            arguments.append("--compressed")
        }
        // HTTP/2 pseudo-header fields (`:authority`, `:path`...) come from the URL and method;
        // curl writes them itself, and `:authority` stands for Host there.
        let fields = request.headers.filter { !$0.name.hasPrefix(":") }
        for field in fields {
            // `Name;` is curl's spelling of a field with an empty value (`Name:` removes it).
            arguments += ["--header", field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"]
        }
        for name in Self.curlDefaults where !request.headers.contains(name) && !(http2 && name == "Host") {
            arguments += ["--header", "\(name):"]
        }
        if hasBody {
            for name in ["Content-Type", "Expect"] where !request.headers.contains(name) {
                arguments += ["--header", "\(name):"]
            }
            let data = request.body.data
            if data.contains(0) || data.first == UInt8(ascii: "@") {
                arguments += ["--data-binary", "@-"]
                standardInput = data
            } else {
                bodyArgumentIndex = arguments.count + 1
                arguments += ["--data-binary", String(decoding: data, as: UTF8.self)]
            }
            bodyData = data
        }
        arguments.append(request.url)
    }

    /// The command for a shell: single-quoted arguments, the body as `$'…'` (every byte
    /// preserved), or piped from `printf` when it holds NUL bytes.
    public var shellCommand: String {
        var words: [String] = []
        for (index, argument) in arguments.enumerated() {
            if index == 0 {
                words.append(argument)
            } else if index == bodyArgumentIndex {
                words.append(Self.ansiCQuoted(bodyData))
            } else {
                words.append(Self.singleQuoted(argument))
            }
        }
        // One option per line; the flags that only shape curl's behaviour stay on the first.
        let lineStarters: Set<String> = ["--request", "--head", "--compressed", "--header", "--data-binary"]
        var lines: [String] = []
        var line = ""
        for (index, word) in words.enumerated() {
            if index > 0, lineStarters.contains(arguments[index]) || index == words.count - 1 {
                lines.append(line)
                line = word
            } else {
                line += line.isEmpty ? word : " " + word
            }
        }
        lines.append(line)
        let command = lines.joined(separator: " \\\n  ")
        guard let standardInput else { return command }
        return "printf \(Self.printfFormat(standardInput)) | \(command)"
    }

    /// `'…'` with each `'` written as `'\''`: nothing inside is special to the shell.
    static func singleQuoted(_ text: String) -> String {
        if !text.isEmpty, text.utf8.allSatisfy({ byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "-_./:=@%+,".utf8.contains(byte)
        }) {
            return text
        }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Bash's `$'…'`: UTF-8 text as written (control characters escaped); any other bytes with
    /// printable ASCII as is and the rest as `\xHH`.
    static func ansiCQuoted(_ data: Data) -> String {
        var out = "$'"
        func escape(_ value: UInt32) -> String? {
            switch value {
            case 0x5C: "\\\\"
            case 0x27: "\\'"
            case 0x0A: "\\n"
            case 0x0D: "\\r"
            case 0x09: "\\t"
            case 0x20..<0x7F: nil
            default: String(format: "\\x%02x", value)
            }
        }
        if let text = String(data: data, encoding: .utf8) {
            for scalar in text.unicodeScalars {
                if scalar.value >= 0x80 {
                    out.unicodeScalars.append(scalar)
                } else if let escaped = escape(scalar.value) {
                    out += escaped
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        } else {
            for byte in data {
                if let escaped = escape(UInt32(byte)) {
                    out += escaped
                } else {
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                }
            }
        }
        return out + "'"
    }

    /// A `printf` format that writes exactly `data`: `%` doubled, every byte outside printable
    /// ASCII (and `\` and `'`) as a three-digit octal escape.
    static func printfFormat(_ data: Data) -> String {
        var out = "'"
        for byte in data {
            switch byte {
            case UInt8(ascii: "%"): out += "%%"
            case UInt8(ascii: "\\"), UInt8(ascii: "'"): out += String(format: "\\%03o", byte)
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += String(format: "\\%03o", byte)
            }
        }
        return out + "'"
    }
}
