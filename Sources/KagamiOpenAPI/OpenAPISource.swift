// The document text as JSON values (JSON or YAML), and positions for OpenAPIKit's coding paths.
import KagamiContract
import KagamiJSON
import KagamiYAML
import Yams

struct OpenAPISourceError: Error {
    var message: String
    var location: SourceLocation
}

enum OpenAPISource {
    /// JSON when the text starts with `{`, YAML otherwise (YAML is a superset, but the JSON
    /// parser gives better positions).
    static func jsonValue(of text: String) throws(OpenAPISourceError) -> JSONValue {
        let start = text.first { !$0.isWhitespace }
        if start == "{" {
            do {
                return try JSONValue(parsing: text)
            } catch {
                throw OpenAPISourceError(message: error.message, location: SourceLocation(line: error.line, column: error.column, offset: error.offset))
            }
        }
        let node: Node?
        do {
            node = try YAMLDocument.compose(text, limits: limits(for: text))
        } catch {
            throw OpenAPISourceError(message: "invalid YAML: \(error.message)", location: SourceLocation(line: error.line ?? 1, column: error.column ?? 1))
        }
        guard let node else {
            throw OpenAPISourceError(message: "empty document", location: SourceLocation(line: 1, column: 1))
        }
        return jsonValue(of: node, depth: 0)
    }

    /// Descriptions run to megabytes; what one stands for with its aliases expanded may be a
    /// few times its text, never the billions a "billion laughs" document asks for.
    static func limits(for text: String) -> YAMLDocument.Limits {
        YAMLDocument.Limits(maximumBytes: 256 << 20, maximumNodes: max(1_000_000, text.utf8.count * 4), maximumDepth: 255)
    }

    private static func jsonValue(of node: Node, depth: Int) -> JSONValue {
        guard depth < 256 else { return .null }
        switch node {
        case .scalar(let scalar):
            // Quoted scalars are strings; plain ones resolve as YAML 1.2's core schema says.
            guard scalar.style == .plain else { return .string(scalar.string) }
            if node.null != nil { return .null }
            if let bool = node.bool { return .bool(bool) }
            if let int = node.int { return .integer(int) }
            if let float = node.float, float.isFinite { return .number(float) }
            return .string(scalar.string)
        case .sequence(let sequence):
            return .array(sequence.map { jsonValue(of: $0, depth: depth + 1) })
        case .mapping(let mapping):
            var object = JSONObject()
            for (key, value) in mapping {
                object[key.string ?? String(describing: key)] = jsonValue(of: value, depth: depth + 1)
            }
            return .object(object)
        case .alias(let alias):
            return .string(String(describing: alias))
        }
    }
}

/// Finds where a key path (from OpenAPIKit's coding paths) is written: each key is searched
/// for after the previous one, quoted (JSON) or followed by `:` (YAML).
struct SourceLocator {
    let text: [UInt8]
    private var lineStarts: [Int] = [0]

    init(text: String) {
        self.text = Array(text.utf8)
        for (offset, byte) in self.text.enumerated() where byte == 0x0A { lineStarts.append(offset + 1) }
    }

    func location(of path: [String]) -> SourceLocation? {
        var offset = 0
        var found = false
        for key in path where !key.isEmpty && Int(key) == nil {
            let candidates = [Array("\"\(key)\"".utf8), Array("\(key):".utf8), Array("'\(key)'".utf8)]
            var best: Int?
            for needle in candidates {
                if let at = find(needle, from: offset), best.map({ at < $0 }) ?? true { best = at }
            }
            guard let best else { break }
            offset = best
            found = true
        }
        guard found else { return nil }
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return SourceLocation(line: low + 1, column: offset - lineStarts[low] + 1, offset: offset)
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, needle.count <= text.count else { return nil }
        var index = start
        let last = text.count - needle.count
        while index <= last {
            if text[index] == first, Array(text[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }
}
