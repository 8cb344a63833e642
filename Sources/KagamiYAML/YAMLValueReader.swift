// YAML text straight to JSON values, from libyaml's events: no tree of Yams nodes in between.
// Yams's composer hashes every mapping key through its regular-expression tag resolver to find
// duplicates (over 45 s for a 52 MB description, before any node is converted); here a mapping's
// keys are compared as strings and a tag is resolved only when two of them are the same text.
// Values, positions and errors come out as `YAMLDocument.compose` and the conversion of its
// nodes give them; what this reader does not handle itself (a key that is a mapping or a
// sequence, an alias standing for more than the limits allow, libyaml's reader errors) it
// leaves to them.
internal import CYaml
import Foundation
import KagamiJSON
import Yams

extension YAMLDocument {
    /// What reading the text gave.
    public enum Values: Sendable {
        /// The root value, with where each value is written.
        case document(JSONValue, JSONSourcePositions)
        /// The text holds no document.
        case empty
        /// Something only the node tree gives exactly (see the file's opening comment):
        /// `compose` then gives the document or the failure.
        case needsNodes
    }

    /// The document as JSON values: quoted scalars are strings; plain ones are null, booleans,
    /// integers, finite numbers or strings as Yams's constructors read them; an alias stands for
    /// its anchor's value. `offset` turns a position (line and column from 1, the column counting
    /// Unicode scalars as libyaml does) into a byte offset, given the enclosing value's offset to
    /// fall back on. A mapping member's offset is its key's.
    public static func values(
        _ text: String, limits: Limits, offset: @escaping @Sendable (_ line: Int, _ column: Int, _ near: Int) -> Int
    ) throws(Failure) -> Values {
        let size = text.utf8.count
        guard size <= limits.maximumBytes else {
            throw Failure(message: "the document is \(size) bytes, more than the \(limits.maximumBytes) accepted")
        }
        var text = text
        let outcome = text.withUTF8 { bytes -> Result<Values, Failure> in
            if let read = YAMLDocumentParts.read(bytes, limits: limits, offset: offset) {
                return .success(.document(read.value, read.positions))
            }
            var reader = YAMLValueReader(limits: limits, offset: offset)
            do throws(Failure) {
                return .success(try reader.read(bytes))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}

/// One pass over libyaml's events.
struct YAMLValueReader {
    /// A value already read, as an alias finds it.
    struct Anchored {
        var value: JSONValue
        var positions: JSONSourcePositions
        /// Nodes the value stands for (keys count, as `YAMLDocument`'s check counts them).
        var nodes: Int
        /// Levels of nesting below it.
        var height: Int
    }

    /// A read node.
    struct Read {
        var value: JSONValue
        var positions: JSONSourcePositions
        var nodes: Int
        var height: Int
    }

    /// Ends the pass: the node tree must decide.
    struct NeedsNodes: Error {}

    /// A part read apart: the members of its mapping, and what stitching it to the parts
    /// before and after needs.
    struct Part {
        var members: Members
        /// The offset of its mapping (its first key).
        var offset: Int
        /// Nodes read, aliases expanded, the part's own mapping counted.
        var nodes: Int
    }

    /// A mapping's members, as read up to its end.
    struct Members {
        var object = JSONObject()
        var positions: [JSONSourcePositions] = []
        var nodes = 0
        var height = 0
        /// The last member's value is a block mapping written from this column (from 0).
        var lastValueColumn: Int?
        /// A key was written twice.
        var repeated = false
    }

    let limits: YAMLDocument.Limits
    let offset: (Int, Int, Int) -> Int
    /// Lines before the bytes read (a part of a document starts further down).
    let lineBase: Int
    var parser = yaml_parser_t()
    var anchors: [String: Anchored] = [:]
    /// Every node read so far, aliases expanded: past the limit, the node tree says where.
    var nodes = 0

    init(limits: YAMLDocument.Limits, offset: @escaping (Int, Int, Int) -> Int, lineBase: Int = 0) {
        self.limits = limits
        self.offset = offset
        self.lineBase = lineBase
    }

    mutating func read(_ bytes: UnsafeBufferPointer<UInt8>) throws(YAMLDocument.Failure) -> YAMLDocument.Values {
        yaml_parser_initialize(&parser)
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(&parser, bytes.baseAddress, bytes.count)
        do {
            var event = try next()
            guard event.type == YAML_STREAM_START_EVENT else { return .needsNodes }
            yaml_event_delete(&event)
            event = try next()
            if event.type == YAML_STREAM_END_EVENT {
                yaml_event_delete(&event)
                return .empty
            }
            // DOCUMENT-START, then the root.
            yaml_event_delete(&event)
            event = try next()
            let root = try node(from: &event, depth: 0, near: 0, at: nil)
            event = try next()
            yaml_event_delete(&event) // DOCUMENT-END
            event = try next()
            defer { yaml_event_delete(&event) }
            if event.type != YAML_STREAM_END_EVENT {
                let mark = mark(event.start_mark)
                throw YAMLDocument.Failure(message: "but found another document", line: mark.line, column: mark.column)
            }
            return .document(root.value, root.positions)
        } catch let failure as YAMLDocument.Failure {
            throw failure
        } catch {
            return .needsNodes
        }
    }

    /// A part of a document cut by `YAMLDocumentParts`: a block mapping written from `column`
    /// (0: members of the root; 2: members of the mapping the last root member before the part
    /// holds), `depth` its depth in the whole document. Anything else is refused (thrown).
    mutating func readPart(_ bytes: UnsafeBufferPointer<UInt8>, column: Int, depth: Int) throws -> Part {
        yaml_parser_initialize(&parser)
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(&parser, bytes.baseAddress, bytes.count)
        for expected in [YAML_STREAM_START_EVENT, YAML_DOCUMENT_START_EVENT] {
            var event = try next()
            defer { yaml_event_delete(&event) }
            guard event.type == expected else { throw NeedsNodes() }
        }
        var start = try next()
        let isMapping = start.type == YAML_MAPPING_START_EVENT && start.data.mapping_start.style == YAML_BLOCK_MAPPING_STYLE
            && start.data.mapping_start.anchor == nil && Int(start.start_mark.column) == column
        let own = offset(mark(start.start_mark).line, column + 1, 0)
        yaml_event_delete(&start)
        guard isMapping else { throw NeedsNodes() }
        nodes += 1
        let members = try self.members(depth: depth, own: own)
        for expected in [YAML_DOCUMENT_END_EVENT, YAML_STREAM_END_EVENT] {
            var event = try next()
            defer { yaml_event_delete(&event) }
            guard event.type == expected else { throw NeedsNodes() }
        }
        return Part(members: members, offset: own, nodes: nodes)
    }

    /// The next event; libyaml's scanner and parser errors worded as `YAMLDocument.failure`
    /// words Yams's.
    mutating func next() throws -> yaml_event_t {
        var event = yaml_event_t()
        guard yaml_parser_parse(&parser, &event) == 1 else {
            switch parser.error {
            case YAML_SCANNER_ERROR, YAML_PARSER_ERROR:
                let problem = parser.problem.map { String(cString: $0) } ?? ""
                throw YAMLDocument.Failure(
                    message: problem, line: parser.problem_mark.line + 1 + lineBase, column: parser.problem_mark.column + 1)
            default:
                throw NeedsNodes()
            }
        }
        return event
    }

    /// Line and column from 1, in the whole document.
    func mark(_ mark: yaml_mark_t) -> (line: Int, column: Int) {
        (mark.line + 1 + lineBase, mark.column + 1)
    }

    /// Reads the node `event` starts (and deletes the event). `near`: the enclosing value's
    /// offset, for a position libyaml cannot give; `given`: the offset to record instead of the
    /// node's own (a mapping member's is its key's).
    mutating func node(from event: inout yaml_event_t, depth: Int, near: Int, at given: Int?) throws -> Read {
        defer { yaml_event_delete(&event) }
        // The checks `YAMLDocument.compose` makes after composing; past them, its own pass
        // finds the node to name.
        nodes += 1
        guard depth <= limits.maximumDepth, nodes <= limits.maximumNodes else { throw NeedsNodes() }
        let start = mark(event.start_mark)
        var own: Int { given ?? offset(start.line, start.column, near) }
        switch event.type {
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let text = Self.text(event)
            let value: JSONValue
            if scalar.style == YAML_PLAIN_SCALAR_STYLE {
                value = Self.plainValue(text, tag: Self.string(scalar.tag))
            } else {
                value = .string(text)
            }
            let read = Read(value: value, positions: JSONSourcePositions(offset: own), nodes: 1, height: 0)
            register(Self.string(scalar.anchor), read, mark: start, near: near)
            return read
        case YAML_ALIAS_EVENT:
            guard let name = Self.string(event.data.alias.anchor), let anchored = anchors[name] else {
                throw YAMLDocument.Failure(message: "found undefined alias", line: start.line, column: start.column)
            }
            // The alias's node itself was counted above.
            nodes += anchored.nodes - 1
            guard depth + anchored.height <= limits.maximumDepth, nodes <= limits.maximumNodes else { throw NeedsNodes() }
            // The anchor's node stands here, where it is written (a member is at its key).
            var positions = anchored.positions
            if let given { positions.offset = given }
            return Read(value: anchored.value, positions: positions, nodes: anchored.nodes, height: anchored.height)
        case YAML_SEQUENCE_START_EVENT:
            let anchor = Self.string(event.data.sequence_start.anchor)
            var items: [JSONValue] = []
            let own = own
            var positions = JSONSourcePositions(offset: own)
            var count = 1
            var height = 0
            while true {
                var child = try next()
                if child.type == YAML_SEQUENCE_END_EVENT {
                    yaml_event_delete(&child)
                    break
                }
                let element = try node(from: &child, depth: depth + 1, near: own, at: nil)
                items.append(element.value)
                positions.children.append(element.positions)
                count += element.nodes
                height = max(height, element.height + 1)
            }
            let read = Read(value: .array(items), positions: positions, nodes: count, height: height)
            register(anchor, read, mark: start, near: near)
            return read
        case YAML_MAPPING_START_EVENT:
            let anchor = Self.string(event.data.mapping_start.anchor)
            let own = own
            let members = try self.members(depth: depth, own: own)
            let read = Read(
                value: .object(members.object), positions: JSONSourcePositions(offset: own, children: members.positions),
                nodes: members.nodes + 1, height: members.height)
            register(anchor, read, mark: start, near: near)
            return read
        default:
            throw NeedsNodes()
        }
    }

    /// A mapping's members, from the event after its start to its end (deleted). `own`: the
    /// mapping's offset.
    mutating func members(depth: Int, own: Int) throws -> Members {
        var members = Members()
        // Keys as written, for the rare mapping that repeats a key's text.
        var keys: [Key] = []
        while true {
            var keyEvent = try next()
            if keyEvent.type == YAML_MAPPING_END_EVENT {
                yaml_event_delete(&keyEvent)
                break
            }
            // A key that is not a scalar needs Yams's description of a node.
            guard keyEvent.type == YAML_SCALAR_EVENT else {
                yaml_event_delete(&keyEvent)
                throw NeedsNodes()
            }
            let key = Key(event: keyEvent, mark: mark(keyEvent.start_mark))
            let keyOffset: Int
            if keyEvent.data.scalar.anchor == nil {
                // Only its text and place are kept: no value is made for it.
                yaml_event_delete(&keyEvent)
                nodes += 1
                guard depth + 1 <= limits.maximumDepth, nodes <= limits.maximumNodes else { throw NeedsNodes() }
                keyOffset = offset(key.mark.line, key.mark.column, own)
                members.nodes += 1
            } else {
                let keyRead = try node(from: &keyEvent, depth: depth + 1, near: own, at: nil)
                keyOffset = keyRead.positions.offset
                members.nodes += keyRead.nodes
            }
            var valueEvent = try next()
            members.lastValueColumn = valueEvent.type == YAML_MAPPING_START_EVENT
                && valueEvent.data.mapping_start.style == YAML_BLOCK_MAPPING_STYLE ? Int(valueEvent.start_mark.column) : nil
            let member = try node(from: &valueEvent, depth: depth + 1, near: keyOffset, at: keyOffset)
            members.nodes += member.nodes
            members.height = max(members.height, member.height + 1)
            // A repeated key replaces the value where the key first stood, as `JSONObject`
            // does: its positions go to that index too.
            if let existing = members.object.index(forKey: key.text) {
                members.positions[existing] = member.positions
                members.repeated = true
            } else {
                members.positions.append(member.positions)
            }
            members.object[key.text] = member.value
            keys.append(key)
        }
        if members.repeated { try Self.checkDuplicates(keys) }
        return members
    }

    /// `mark`: where the node itself is written, which an alias in a sequence stands at (a
    /// member read stands at its key).
    mutating func register(_ anchor: String?, _ read: Read, mark: (line: Int, column: Int), near: Int) {
        guard let anchor else { return }
        var positions = read.positions
        positions.offset = offset(mark.line, mark.column, near)
        anchors[anchor] = Anchored(value: read.value, positions: positions, nodes: read.nodes, height: read.height)
    }

    /// A scalar's text as Yams makes it (Foundation's `String(bytes:encoding:)`, which drops a
    /// byte order mark at the start).
    static func text(_ event: yaml_event_t) -> String {
        var bytes = UnsafeBufferPointer<UInt8>(start: event.data.scalar.value, count: event.data.scalar.length)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = UnsafeBufferPointer(rebasing: bytes.dropFirst(3)) }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func string(_ pointer: UnsafeMutablePointer<UInt8>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// A mapping key as Yams compares keys: its text and resolved tag.
    struct Key {
        var text: String
        var tag: String?
        var style: Node.Scalar.Style
        var mark: (line: Int, column: Int)

        init(event: yaml_event_t, mark: (line: Int, column: Int)) {
            let scalar = event.data.scalar
            text = YAMLValueReader.text(event)
            // A quoted scalar without a tag is a string (libyaml's `quoted_implicit`).
            tag = scalar.quoted_implicit == 1 ? Tag.Name.str.rawValue : YAMLValueReader.string(scalar.tag)
            style = Node.Scalar.Style(rawValue: numericCast(scalar.style.rawValue)) ?? .any
            self.mark = mark
        }

        var node: Node {
            .scalar(Node.Scalar(text, Tag(tag.map(Tag.Name.init(rawValue:)) ?? .implicit), style))
        }
    }

    /// Yams refuses a mapping whose keys repeat (same text, same resolved tag), naming them
    /// sorted, at the first of the first one.
    static func checkDuplicates(_ keys: [Key]) throws(YAMLDocument.Failure) {
        var groups: [Node: [Key]] = [:]
        var order: [Node] = []
        for key in keys {
            let node = key.node
            if groups[node] == nil { order.append(node) }
            groups[node, default: []].append(key)
        }
        let duplicated = order.filter { (groups[$0]?.count ?? 0) > 1 }.sorted()
        guard let first = duplicated.first, let mark = groups[first]?.first?.mark else { return }
        let names = duplicated.map { "\"\($0.string ?? "<uncovertable>")\"" }.joined(separator: ", ")
        throw YAMLDocument.Failure(message: "duplicate key \(names)", line: mark.line, column: mark.column)
    }

    /// A plain scalar's value. Text starting with a letter that is not one of YAML's words for
    /// null and the booleans, or with a slash, is a string whatever else it holds (no integer
    /// or finite number starts with either), and untagged decimal digits are an integer: the
    /// common cases need no constructor (Yams's integer constructor copies the text to strip
    /// underscores, a second of a 50 MB description).
    static func plainValue(_ text: String, tag: String?) -> JSONValue {
        let utf8 = text.utf8
        if let first = utf8.first {
            let isLetter = (first >= 0x41 && first <= 0x5A) || (first >= 0x61 && first <= 0x7A)
            if first == 0x2F || (isLetter && !isWordForNullOrBoolean(utf8)) { return .string(text) }
            if tag == nil, let integer = decimalInteger(utf8) { return .integer(integer) }
        }
        let scalar = Node.Scalar(text, Tag(tag.map(Tag.Name.init(rawValue:)) ?? .implicit), .plain)
        if NSNull.construct(from: scalar) != nil { return .null }
        if let bool = Bool.construct(from: scalar) { return .bool(bool) }
        if let int = Int.construct(from: scalar) { return .integer(int) }
        if let float = Double.construct(from: scalar), float.isFinite { return .number(float) }
        return .string(text)
    }

    private static let wordsForNullAndBooleans: [[UInt8]] = ["true", "yes", "on", "false", "no", "off", "null"].map { Array($0.utf8) }

    /// true, yes, on, false, no, off or null in any case (as Yams lower-cases them; no other
    /// character lower-cases to one of their letters).
    static func isWordForNullOrBoolean(_ utf8: String.UTF8View) -> Bool {
        guard utf8.count <= 5 else { return false }
        return wordsForNullAndBooleans.contains { word in
            word.count == utf8.count && zip(word, utf8).allSatisfy { expected, byte in
                byte == expected || (byte >= 0x41 && byte <= 0x5A && byte | 0x20 == expected)
            }
        }
    }

    /// Decimal digits without a leading zero (a leading zero is octal to Yams), as Yams reads
    /// them; nil for anything else, and for more digits than surely fit.
    static func decimalInteger(_ utf8: String.UTF8View) -> Int? {
        guard let first = utf8.first, utf8.count <= 18, utf8.count == 1 || first != 0x30 else { return nil }
        var value = 0
        for byte in utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}
