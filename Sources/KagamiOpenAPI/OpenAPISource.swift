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
    /// The document as JSON values (JSON when the text starts with `{`, YAML otherwise: YAML
    /// is a superset, but the JSON parser gives better positions), with where each value is
    /// written.
    /// The locator keeps the line starts, not the text.
    static func read(_ text: String) throws(OpenAPISourceError) -> (value: JSONValue, locator: SourceLocator) {
        let lines = SourceLines(text: text)
        let start = text.first { !$0.isWhitespace }
        if start == "{" {
            do {
                let (value, positions) = try JSONValue.parsingWithPositions(text)
                return (value, SourceLocator(root: value, positions: positions, lines: lines.withoutText))
            } catch {
                throw OpenAPISourceError(message: error.message, location: SourceLocation(line: error.line, column: error.column, offset: error.offset))
            }
        }
        return try readYAML(text, lines: lines)
    }

    /// A document read as OpenAPI 3: the document itself, or a Swagger 2.0 document in the
    /// 3.0 form (`SwaggerTranslation`), its positions those of the 2.0 text.
    struct Document {
        var value: JSONValue
        var locator: SourceLocator
        var swagger: Swagger?
    }

    /// What reading a Swagger 2.0 document as 3.0 left: the 2.0 document (whose references
    /// are checked as written), what 3.0 could not carry, and what 2.0 itself forbids.
    struct Swagger {
        var original: JSONValue
        var locator: SourceLocator
        var notes: [ConversionNote]
        var problems: [Annotation]
    }

    static func readAsOpenAPI3(_ text: String) throws(OpenAPISourceError) -> Document {
        let (value, locator) = try read(text)
        guard let version = value["swagger"] else { return Document(value: value, locator: locator) }
        guard SwaggerTranslation.isVersion2(version) else {
            let found = version.stringValue ?? version.serialized()
            throw OpenAPISourceError(
                message: "expected a Swagger 2.0 or OpenAPI 3.0 or 3.1 document, found 'swagger: \(found)'",
                location: locator.location(of: ["swagger"]) ?? SourceLocation(line: 1, column: 1))
        }
        let translated = SwaggerTranslation.translate(value, positions: locator.positions, lines: locator.lines)
        return Document(
            value: translated.document.value,
            locator: SourceLocator(root: translated.document.value, positions: translated.document.positions, lines: locator.lines),
            swagger: Swagger(original: value, locator: locator, notes: translated.notes, problems: translated.problems))
    }

    /// The YAML document, from libyaml's events (see YAMLValueReader), through Yams's node
    /// tree where only that gives it exactly.
    static func readYAML(_ text: String, lines: SourceLines) throws(OpenAPISourceError) -> (value: JSONValue, locator: SourceLocator) {
        let limits = limits(for: text)
        let values: YAMLDocument.Values
        do {
            values = try YAMLDocument.values(text, limits: limits, offset: { lines.offset(ofLine: $0, column: $1, near: $2) })
        } catch {
            throw OpenAPISourceError(message: "invalid YAML: \(error.message)", location: SourceLocation(line: error.line ?? 1, column: error.column ?? 1))
        }
        switch values {
        case .document(let value, let positions):
            return (value, SourceLocator(root: value, positions: positions, lines: lines.withoutText))
        case .empty:
            throw OpenAPISourceError(message: "empty document", location: SourceLocation(line: 1, column: 1))
        case .needsNodes:
            return try readThroughNodes(text, lines: lines, limits: limits)
        }
    }

    /// The YAML document read through Yams's node tree: what `YAMLDocument.values` leaves to it
    /// (a key that is a mapping, an alias standing for more than the limits allow).
    static func readThroughNodes(
        _ text: String, lines: SourceLines, limits: YAMLDocument.Limits
    ) throws(OpenAPISourceError) -> (value: JSONValue, locator: SourceLocator) {
        let node: Node?
        do {
            node = try YAMLDocument.compose(text, limits: limits)
        } catch {
            throw OpenAPISourceError(message: "invalid YAML: \(error.message)", location: SourceLocation(line: error.line ?? 1, column: error.column ?? 1))
        }
        guard let node else {
            throw OpenAPISourceError(message: "empty document", location: SourceLocation(line: 1, column: 1))
        }
        var positions = JSONSourcePositions(offset: lines.offset(of: node.mark, near: 0))
        let value = jsonValue(of: node, depth: 0, lines: lines, positions: &positions)
        return (value, SourceLocator(root: value, positions: positions, lines: lines.withoutText))
    }

    /// Descriptions run to megabytes; what one stands for with its aliases expanded may be a
    /// few times its text, never the billions a "billion laughs" document asks for.
    static func limits(for text: String) -> YAMLDocument.Limits {
        YAMLDocument.Limits(maximumBytes: 256 << 20, maximumNodes: max(1_000_000, text.utf8.count * 4), maximumDepth: 255)
    }

    /// `positions` gets the positions of the node's members or elements (its own offset is
    /// set by the caller: a member's is that of its key).
    private static func jsonValue(of node: Node, depth: Int, lines: SourceLines, positions: inout JSONSourcePositions) -> JSONValue {
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
            var items: [JSONValue] = []
            items.reserveCapacity(sequence.count)
            positions.children.reserveCapacity(sequence.count)
            for element in sequence {
                var child = JSONSourcePositions(offset: lines.offset(of: element.mark, near: positions.offset))
                items.append(jsonValue(of: element, depth: depth + 1, lines: lines, positions: &child))
                positions.children.append(child)
            }
            return .array(items)
        case .mapping(let mapping):
            var object = JSONObject()
            for (key, value) in mapping {
                let name = key.string ?? String(describing: key)
                var child = JSONSourcePositions(offset: lines.offset(of: key.mark, near: positions.offset))
                let converted = jsonValue(of: value, depth: depth + 1, lines: lines, positions: &child)
                // A repeated key replaces the value where the key first stood, as `JSONObject`
                // does: its positions go to that index too.
                if let existing = object.index(forKey: name) {
                    positions.children[existing] = child
                } else {
                    positions.children.append(child)
                }
                object[name] = converted
            }
            return .object(object)
        case .alias(let alias):
            return .string(String(describing: alias))
        }
    }
}

/// Finds where a key path (from OpenAPIKit's coding paths, or the reader's own) is written:
/// at the key of the deepest member of the path the document has (array indices lead to
/// the element), from the positions the parser recorded, so finding one costs the path's
/// length whatever the size of the document.
struct SourceLocator {
    let root: JSONValue
    let positions: JSONSourcePositions
    let lines: SourceLines

    func location(of path: [String]) -> SourceLocation? {
        guard let (offset, _) = positions.offset(of: path, in: root) else { return nil }
        return lines.location(ofOffset: offset)
    }
}

/// Where the lines of a text start, to turn byte offsets into lines and columns and back.
struct SourceLines {
    /// Needed to turn YAML's marks into offsets while the text is read; nil after.
    private var text: String?
    private let starts: [Int]

    init(text: String) {
        self.text = text
        func lineStarts(_ bytes: some Sequence<UInt8>) -> [Int] {
            var starts = [0]
            for (offset, byte) in bytes.enumerated() where byte == 0x0A { starts.append(offset + 1) }
            return starts
        }
        starts = text.utf8.withContiguousStorageIfAvailable(lineStarts) ?? lineStarts(text.utf8)
    }

    /// The same lines without the text: offsets into lines and columns only.
    var withoutText: SourceLines {
        var lines = self
        lines.text = nil
        return lines
    }

    /// Line and column (counting bytes) of a byte offset.
    func location(ofOffset offset: Int) -> SourceLocation {
        var low = 0
        var high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return SourceLocation(line: low + 1, column: offset - starts[low] + 1, offset: offset)
    }

    /// The byte offset of a YAML mark (line and column from 1, the column counting Unicode
    /// scalars as libyaml does); `fallback` when there is no mark.
    func offset(of mark: Mark?, near fallback: Int) -> Int {
        guard let mark else { return fallback }
        return offset(ofLine: mark.line, column: mark.column, near: fallback)
    }

    /// The byte offset of a line and column from 1 (the column counting Unicode scalars);
    /// `fallback` when the text has no such line.
    func offset(ofLine line: Int, column: Int, near fallback: Int) -> Int {
        guard line >= 1, line <= starts.count else { return fallback }
        let lineStart = starts[line - 1]
        // Counts scalars by their first bytes (UTF-8 continuation bytes are 10xxxxxx).
        func offset(_ bytes: some Collection<UInt8>) -> Int {
            var offset = lineStart
            var scalars = 0
            for byte in bytes.dropFirst(lineStart) {
                if byte & 0xC0 != 0x80 {
                    if scalars == column - 1 { break }
                    scalars += 1
                }
                offset += 1
            }
            return offset
        }
        guard let text else { return fallback }
        return text.utf8.withContiguousStorageIfAvailable(offset) ?? offset(text.utf8)
    }
}
