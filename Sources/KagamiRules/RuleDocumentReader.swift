// Reads rules documents (and scenario files, which share their shape of errors) with positions: YAML through Yams's node marks; JSON checked by
// KagamiJSON's strict parser first, then read as YAML (which JSON is) for the marks.
import Foundation
import KagamiJSON
import KagamiYAML
import Yams

/// Why a rules document was refused, with where to look: `rules.yaml:12:7:
/// rewrite[0].rules[2].type: unknown rule type "Add Heder"`.
public struct RuleDocumentError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?
    /// The path to the field, e.g. `rewrite[0].rules[2].type`; empty for the whole document.
    public var field: String
    public var message: String

    public init(file: String, line: Int?, column: Int?, field: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.message = message
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        if let column { text += ":\(column)" }
        text += ": "
        if !field.isEmpty { text += "\(field): " }
        return text + message
    }
}

public enum RuleDocumentReader {
    /// Far beyond any rules document, and small enough that hostile input (deep nesting, a
    /// "billion laughs" of aliases) is refused before it costs.
    static let limits = YAMLDocument.Limits(maximumBytes: 16 << 20, maximumNodes: 1_000_000, maximumDepth: 64)

    /// The text of the document at `path`, and the name errors give it (the file's name); a file
    /// that can't be read, or isn't UTF-8, is refused saying so.
    public static func text(contentsOf path: String) throws(RuleDocumentError) -> (text: String, file: String) {
        let name = (path as NSString).lastPathComponent
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RuleDocumentError(file: name, line: nil, column: nil, field: "", message: "can't read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw RuleDocumentError(file: name, line: nil, column: nil, field: "", message: "not UTF-8 text")
        }
        return (text, name)
    }

    /// `text` as a `T`: a document that doesn't parse or decode is refused with the file, line,
    /// column and field of the first problem.
    public static func decode<T: Decodable>(_ type: T.Type, from text: String, file: String) throws(RuleDocumentError) -> T {
        // A JSON file's own error is JSON's (YAML would read it, and word it less well); YAML's
        // flow style starts the same way (`{blockList: …}`) and is read as YAML.
        let trimmed = text.drop { $0.isWhitespace }
        if trimmed.first == "{" || trimmed.first == "[", file.lowercased().hasSuffix(".json") {
            do {
                _ = try JSONValue(parsing: text)
            } catch {
                throw RuleDocumentError(file: file, line: error.line, column: error.column, field: "", message: error.message)
            }
        }
        let root: Node
        do {
            root = try YAMLDocument.compose(text, limits: limits) ?? Node.mapping(Node.Mapping([]))
        } catch {
            throw RuleDocumentError(file: file, line: error.line, column: error.column, field: "", message: error.message)
        }
        do {
            return try YAMLDecoder().decode(T.self, from: root)
        } catch let error as DecodingError {
            throw documentError(error, root: root, file: file)
        } catch {
            throw RuleDocumentError(file: file, line: nil, column: nil, field: "", message: "\(error)")
        }
    }

    static func documentError(_ error: DecodingError, root: Node, file: String) -> RuleDocumentError {
        let path: [any CodingKey]
        let message: String
        switch error {
        case .keyNotFound(let key, let context):
            path = context.codingPath
            message = "missing required field \"\(key.stringValue)\""
            let mark = node(at: path, in: root)?.mark
            return RuleDocumentError(
                file: file, line: mark?.line, column: mark?.column,
                field: fieldName(path + [key]), message: message)
        case .typeMismatch(let type, let context):
            path = context.codingPath
            message = "expected \(typeName(type))" + found(at: path, in: root)
        case .valueNotFound(let type, let context):
            path = context.codingPath
            message = "expected \(typeName(type)), found nothing"
        case .dataCorrupted(let context):
            path = context.codingPath
            message = context.debugDescription
        @unknown default:
            return RuleDocumentError(file: file, line: nil, column: nil, field: "", message: "\(error)")
        }
        let mark = mark(at: path, in: root)
        return RuleDocumentError(file: file, line: mark?.line, column: mark?.column, field: fieldName(path), message: message)
    }

    /// `error` with the line and column of its field (`fieldName`'s text) in the document
    /// `text`, for an error found after the document was read (a file it names that can't be
    /// read); as it is when the field isn't there.
    public static func placed(_ error: RuleDocumentError, in text: String) -> RuleDocumentError {
        guard error.line == nil, let root = try? YAMLDocument.compose(text, limits: limits) else { return error }
        var path: [any CodingKey] = []
        for part in error.field.split(separator: ".") {
            var rest = Substring(part)
            if let bracket = rest.firstIndex(of: "[") {
                path.append(AnyCodingKey(stringValue: String(rest[..<bracket])))
                rest = rest[bracket...]
            } else {
                path.append(AnyCodingKey(stringValue: String(rest)))
                continue
            }
            while rest.first == "[", let close = rest.firstIndex(of: "]") {
                guard let index = Int(rest[rest.index(after: rest.startIndex)..<close]), let key = AnyCodingKey(intValue: index) else { return error }
                path.append(key)
                rest = rest[rest.index(after: close)...]
            }
        }
        guard !path.isEmpty, node(at: path, in: root) != nil, let mark = mark(at: path, in: root) else { return error }
        var placed = error
        placed.line = mark.line
        placed.column = mark.column
        return placed
    }

    /// `rewrite[0].rules[2].type`
    public static func fieldName(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "text"
        case is Int.Type: "a whole number"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        default: String(describing: type).hasPrefix("Array") ? "a list" : "a mapping"
        }
    }

    static func found(at path: [any CodingKey], in root: Node) -> String {
        switch node(at: path, in: root) {
        case .scalar(let scalar)?: ", found \"\(scalar.string)\""
        case .sequence?: ", found a list"
        case .mapping?: ", found a mapping"
        default: ""
        }
    }

    /// Where the field at `path` is written: a mapping key's own position when the path ends at
    /// one (so `type:` is pointed at, not its value), else the node's.
    static func mark(at path: [any CodingKey], in root: Node) -> Mark? {
        guard let last = path.last else { return root.mark }
        let parent = node(at: Array(path.dropLast()), in: root)
        if last.intValue == nil, let mapping = parent?.mapping,
           let key = mapping.first(where: { $0.key.string == last.stringValue })?.key {
            return key.mark
        }
        // The deepest node that exists is the best place to point at.
        var prefix = path
        while !prefix.isEmpty {
            if let found = node(at: prefix, in: root) { return found.mark }
            prefix.removeLast()
        }
        return root.mark
    }

    static func node(at path: [any CodingKey], in root: Node) -> Node? {
        var current = root
        for key in path {
            if let index = key.intValue, let sequence = current.sequence {
                guard index >= 0, index < sequence.count else { return nil }
                current = sequence[index]
            } else if let mapping = current.mapping, let next = mapping[key.stringValue] {
                current = next
            } else {
                return nil
            }
        }
        return current
    }
}
