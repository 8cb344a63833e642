import Foundation
import KagamiJSON

/// RFC 6901 JSON Pointers, as used for instance and schema locations and `$ref` fragments.
public enum JSONPointer {
    public static func escape(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        // By scalar: Foundation's replacingOccurrences was most of the cost of a pointer.
        var escaped = String.UnicodeScalarView()
        for scalar in token.unicodeScalars {
            switch scalar {
            case "~": escaped.append(contentsOf: "~0".unicodeScalars)
            case "/": escaped.append(contentsOf: "~1".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    public static func unescape(_ token: String) -> String {
        guard token.contains("~") else { return token }
        return token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }

    public static func string(_ tokens: [String]) -> String {
        // Byte by byte into one buffer: readers make a pointer for each of a large
        // description's payloads.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(tokens.reduce(0) { $0 + $1.utf8.count + 1 })
        for token in tokens {
            bytes.append(UInt8(ascii: "/"))
            for byte in token.utf8 {
                switch byte {
                case UInt8(ascii: "~"), UInt8(ascii: "/"):
                    bytes.append(UInt8(ascii: "~"))
                    bytes.append(byte == UInt8(ascii: "~") ? UInt8(ascii: "0") : UInt8(ascii: "1"))
                default: bytes.append(byte)
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The tokens of a pointer, or nil when it is neither empty nor starts with `/`.
    public static func tokens(_ pointer: String) -> [String]? {
        if pointer.isEmpty { return [] }
        guard pointer.hasPrefix("/") else { return nil }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { unescape(String($0)) }
    }

    public static func resolve(_ tokens: some Sequence<String>, in document: JSONValue) -> JSONValue? {
        var current = document
        for token in tokens {
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let items):
                // RFC 6901 array indexes: no sign, no leading zeros.
                guard let index = Int(token), index >= 0, index < items.count,
                      token == "0" || !token.hasPrefix("0") else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }
}
