// What every sample of one place in a body (or message) had: types, members, elements, and
// whether its value stayed the same. One per place and operation, whatever the number of
// exchanges, so a capture of any size is summarised in bounded memory.
import Foundation
import KagamiInfer
import KagamiJSON
import OrderedCollections

/// One value's samples merged. Like `SchemaSketch` (KagamiInfer) it merges every sample of a
/// place, but it also keeps, for a diff, which exchange first showed each place and whether a
/// scalar's value ever changed within the capture.
struct ValueShape: Sendable {
    /// Samples of this place, nulls included.
    var seen = 0
    /// The first exchange with a value here.
    var firstID: UUID?
    var nulls = 0
    var booleans = 0
    var numbers = 0
    var strings = 0
    var arrays = 0
    var objects = 0
    /// Arrays that had no element.
    var emptyArrays = 0
    var scalar = ScalarTally()
    /// Object members by name; members whose names are ids (`{"4711": {…}}`) are one member `*`.
    var members: OrderedDictionary<String, ValueShape> = [:]
    /// Every element of every array merged (zero or one entry: a struct can't hold itself).
    var items: [ValueShape] = []

    enum Limits {
        static let depth = SchemaSketch.Limits.depth
        static let members = SchemaSketch.Limits.properties
    }

    /// The name a member is kept under: `*` for names that are values (ids, dates, emails).
    static func memberName(_ key: String) -> String {
        PathSegmentShape.of(key).isValue ? "*" : key
    }

    /// Adds one sample. `namedMembers`: member names are never ids (gRPC field numbers).
    mutating func add(_ value: JSONValue, id: UUID, namedMembers: Bool = false) {
        add(value, id: id, depth: 0, namedMembers: namedMembers)
    }

    private mutating func add(_ value: JSONValue, id: UUID, depth: Int, namedMembers: Bool) {
        seen += 1
        if firstID == nil { firstID = id }
        guard depth < Limits.depth else { return }
        switch value {
        case .null:
            nulls += 1
            scalar.add("null", kind: .literal, id: id)
        case .bool(let flag):
            booleans += 1
            scalar.add(flag ? "true" : "false", kind: .literal, id: id)
        case .integer(let number):
            numbers += 1
            scalar.add(String(number), kind: .number, id: id)
        case .number:
            numbers += 1
            scalar.add(value.serialized(), kind: .number, id: id)
        case .string(let text):
            strings += 1
            scalar.add(text, kind: .string, id: id)
        case .array(let elements):
            arrays += 1
            scalar.markVaried()
            if elements.isEmpty { emptyArrays += 1 }
            if items.isEmpty, !elements.isEmpty { items = [ValueShape()] }
            for element in elements { items[0].add(element, id: id, depth: depth + 1, namedMembers: namedMembers) }
        case .object(let object):
            objects += 1
            scalar.markVaried()
            // A map keyed by ids holds its entries under one name; each counts once per object.
            var counted: Set<String> = []
            for (key, member) in object {
                // A name kept already is a name, not an id: classifying every key of every
                // object would cost more than the rest of the body.
                guard let (name, index) = memberIndex(key, namedMembers: namedMembers) else { continue }
                // Through the index, the member is changed where it is, not moved out and back.
                if name == "*", !namedMembers {
                    members.values[index].addMapEntry(member, id: id, depth: depth + 1, first: counted.insert(name).inserted)
                } else {
                    members.values[index].add(member, id: id, depth: depth + 1, namedMembers: namedMembers)
                }
            }
        }
    }

    /// Adds one JSON document, read value by value from `bytes` without building it, when
    /// pulling reads it exactly as parsing would (`JSONPullReader.readsLikeParsing`); false,
    /// with nothing added, for a document to parse and `add` instead, or not JSON at all.
    mutating func add(json bytes: UnsafeRawBufferPointer, id: UUID) -> Bool {
        guard JSONPullReader.readsLikeParsing(bytes) else { return false }
        // A checked document reads without an error.
        do {
            try JSONPullReader.read(bytes) { reader in try add(pulling: &reader, id: id, depth: 0) }
        } catch {
            assertionFailure("a document readsLikeParsing accepted failed to read: \(error)")
        }
        return true
    }

    /// `add(_:id:depth:namedMembers:)` for the value `reader` is at (member names are never
    /// `namedMembers` in a body).
    private mutating func add(pulling reader: inout JSONPullReader, id: UUID, depth: Int) throws {
        seen += 1
        if firstID == nil { firstID = id }
        guard depth < Limits.depth else { return try reader.skip() }
        switch reader.nextKind {
        case .null:
            _ = try reader.null()
            nulls += 1
            scalar.add("null", kind: .literal, id: id)
        case .bool:
            let flag = try reader.bool()
            booleans += 1
            scalar.add(flag ? "true" : "false", kind: .literal, id: id)
        // Past its second value, a place's scalars are counted and not read.
        case .number where scalar.varies, .string where scalar.varies:
            if reader.nextKind == .number { numbers += 1 } else { strings += 1 }
            try reader.skip()
            scalar.addToVaried()
        case .number:
            let value = try reader.number()
            numbers += 1
            if case .integer(let number) = value {
                scalar.add(String(number), kind: .number, id: id)
            } else {
                scalar.add(value.serialized(), kind: .number, id: id)
            }
        case .string:
            let text = try reader.string()
            strings += 1
            scalar.add(text, kind: .string, id: id)
        case .array:
            arrays += 1
            scalar.markVaried()
            var count = 0
            try reader.elements { reader in
                if items.isEmpty { items = [ValueShape()] }
                count += 1
                try items[0].add(pulling: &reader, id: id, depth: depth + 1)
            }
            if count == 0 { emptyArrays += 1 }
        case .object:
            objects += 1
            scalar.markVaried()
            var counted = false
            try reader.members { reader, key in
                guard let (name, index) = memberIndex(key, namedMembers: false) else { return try reader.skip() }
                if name == "*" {
                    let before = members.values[index].seen
                    try members.values[index].add(pulling: &reader, id: id, depth: depth + 1)
                    // Present once per object, however many entries the map has.
                    if counted { members.values[index].seen = before }
                    counted = true
                } else {
                    try members.values[index].add(pulling: &reader, id: id, depth: depth + 1)
                }
            }
        case nil:
            throw reader.error("expected a value")
        }
    }

    /// The name `key` is kept under and its member's index, the member made when new; nil past
    /// the members kept.
    private mutating func memberIndex(_ key: String, namedMembers: Bool) -> (name: String, index: Int)? {
        if let index = members.index(forKey: key) { return (key, index) }
        let name = namedMembers ? key : Self.memberName(key)
        if name != key, let index = members.index(forKey: name) { return (name, index) }
        guard members.count < Limits.members else { return nil }
        return (name, members.updateValue(ValueShape(), forKey: name, insertingAt: members.count).index)
    }

    /// One entry of an id-keyed map: its value is merged, but the member counts as present
    /// once per object, so presence compares objects with objects.
    private mutating func addMapEntry(_ value: JSONValue, id: UUID, depth: Int, first: Bool) {
        let before = seen
        add(value, id: id, depth: depth, namedMembers: false)
        if !first { seen = before }
    }

    /// Adds what `other` saw, as if its samples had been added here after these.
    mutating func merge(_ other: ValueShape) {
        merge(other, depth: 0)
    }

    private mutating func merge(_ other: ValueShape, depth: Int) {
        guard depth < Limits.depth else { return }
        seen += other.seen
        if firstID == nil { firstID = other.firstID }
        nulls += other.nulls
        booleans += other.booleans
        numbers += other.numbers
        strings += other.strings
        arrays += other.arrays
        objects += other.objects
        emptyArrays += other.emptyArrays
        scalar.merge(other.scalar)
        for (name, member) in other.members {
            if members[name] != nil {
                members[name]?.merge(member, depth: depth + 1)
            } else if members.count < Limits.members {
                members[name] = member
            }
        }
        if let theirs = other.items.first {
            if items.isEmpty { items = [theirs] } else { items[0].merge(theirs, depth: depth + 1) }
        }
    }

    /// The JSON types seen besides null, as JSON Schema names them (integers and fractions
    /// are one `number`: which one a value happens to be is data, not shape).
    var types: [String] {
        var result: [String] = []
        if objects > 0 { result.append("object") }
        if arrays > 0 { result.append("array") }
        if strings > 0 { result.append("string") }
        if numbers > 0 { result.append("number") }
        if booleans > 0 { result.append("boolean") }
        return result
    }

    var typeText: String {
        let names = types
        return names.isEmpty ? "null" : names.joined(separator: " or ")
    }
}

/// Whether one place's value stayed the same in every exchange of a capture, and what it was.
struct ScalarTally: Sendable, Hashable {
    enum Kind: Sendable {
        /// A JSON string: shown quoted.
        case string
        /// A JSON number.
        case number
        /// `true`, `false`, `null`.
        case literal
        /// A header's or query parameter's text: shown as it is.
        case text
    }

    /// The value as the report shows it (JSON text for body values), cut to 200 characters.
    private(set) var text: String?
    /// The first value looks like an id, a time or a token (`Volatility`): a change of it is
    /// not news even when each capture had only one.
    private(set) var looksVolatile = false
    /// The whole value's hash and length, so long values compare whole without being kept.
    private var digest = 0
    private var length = 0
    /// The first exchange with the value.
    private(set) var firstID: UUID?
    /// Two different values (or a container) were seen here.
    private(set) var varies = false
    private(set) var samples = 0

    static let shownLength = 200

    /// `value` is made only while the place has had one value: most places soon vary.
    mutating func add(_ make: @autoclosure () -> String, kind: Kind, id: UUID) {
        samples += 1
        guard !varies else { return }
        let value = make()
        let hash = value.hashValue
        let count = value.utf8.count
        guard text != nil else {
            text = Self.shown(value, quoted: kind == .string)
            digest = hash
            length = count
            firstID = id
            looksVolatile = Volatility.looksVolatile(value, kind: kind)
            return
        }
        if hash != digest || count != length { varies = true }
    }

    /// A sample of a place that varies already, whose value is not needed.
    mutating func addToVaried() {
        assert(varies, "a value is needed while the place has had only one")
        samples += 1
    }

    mutating func markVaried() {
        samples += 1
        varies = true
    }

    mutating func merge(_ other: ScalarTally) {
        samples += other.samples
        guard !varies else { return }
        if other.varies {
            varies = true
        } else if text == nil {
            text = other.text
            digest = other.digest
            length = other.length
            firstID = other.firstID
            looksVolatile = other.looksVolatile
        } else if other.text != nil, other.digest != digest || other.length != length {
            varies = true
        }
    }

    /// The same single value on both sides.
    func sameValue(as other: ScalarTally) -> Bool {
        digest == other.digest && length == other.length && text == other.text
    }

    private static func shown(_ value: String, quoted: Bool) -> String {
        let cut = value.count > shownLength ? String(value.prefix(shownLength)) + "…" : value
        return quoted ? JSONValue.string(cut).serialized() : cut
    }
}
