/// HTTP header fields as they travelled: in order, with duplicates and the original spelling of
/// each name. Lookups ignore case, as HTTP does.
public struct HeaderFields: Sendable, Hashable, Codable {
    public struct Field: Sendable, Hashable, Codable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var fields: [Field]

    public init(_ fields: [Field] = []) { self.fields = fields }

    public init(_ pairs: [(String, String)]) {
        self.fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Fields from a sequence of named pairs, such as NIO's `HTTPHeaders`.
    /// Inlinable, so it is specialised for the sequence where it is used (it runs per exchange).
    @inlinable
    public init<Pairs: Sequence>(_ pairs: Pairs) where Pairs.Element == (name: String, value: String) {
        self.fields = pairs.map { Field(name: $0.name, value: $0.value) }
    }

    /// The fields as name–value pairs, in order: what NIO's `HTTPHeaders` is built from.
    public var pairs: [(String, String)] { fields.map { ($0.name, $0.value) } }

    public var isEmpty: Bool { fields.isEmpty }
    public var count: Int { fields.count }

    /// The first value for `name`.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.caseInsensitiveEquals(name) }
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field called `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// Replaces the first field called `name` (keeping its position) and drops the others;
    /// appends when there is none.
    public mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) {
            fields[index].value = value
            var seen = false
            fields.removeAll { field in
                guard field.name.caseInsensitiveEquals(name) else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            add(name, value)
        }
    }

    /// Size of the fields on the wire in HTTP/1.1 (`name: value\r\n` each).
    public var wireSize: Int {
        fields.reduce(0) { $0 + $1.name.utf8.count + 2 + $1.value.utf8.count + 2 }
    }
}

extension HeaderFields: Sequence {
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

extension String {
    /// ASCII case-insensitive comparison, as header names use.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A)
        }
    }
}
