// A schema of an OpenAPI document put in the JSON Schema 2020-12 form the contract holds,
// keyword by keyword from the document's values: the form OpenAPIKit gives it back (a 3.0
// schema as OpenAPIKitCompat converts it to 3.1, members in name order, numbers as
// `JSONEncoder` writes them), without decoding it into OpenAPIKit's model and encoding it
// again. A schema with a keyword or a shape not translated here has no translation: OpenAPIKit
// makes its form (`SchemaForms`), so a description comes out the same either way.
import KagamiContract
import KagamiJSON

struct SchemaTranslation {
    private let isOpenAPI30: Bool
    /// Whether the form may hold a `type: "null"` that `withoutAddedNullType` takes away, or a
    /// copied value (an example, a default) in which it would find one.
    private var mayHoldNullType = false

    /// The form of a schema, or nil when it is left to OpenAPIKit.
    static func form(of schema: JSONValue, format: ContractFormat) -> JSONValue? {
        var translation = SchemaTranslation(isOpenAPI30: format == .openAPI30)
        guard let (form, _) = translation.schema(schema, depth: 0) else { return nil }
        return translation.mayHoldNullType ? OpenAPIContractBuilder.withoutAddedNullType(form) : form
    }

    /// An example value as OpenAPIKit gives it back (`AnyCodable` encoded): members in name
    /// order, numbers as `JSONEncoder` writes them.
    static func example(_ value: JSONValue) -> JSONValue {
        var translation = SchemaTranslation(isOpenAPI30: false)
        let form = translation.copied(value)
        return translation.mayHoldNullType ? OpenAPIContractBuilder.withoutAddedNullType(form) : form
    }

    /// A 3.0 schema as OpenAPIKitCompat gives it back has `minProperties` on every object (the
    /// larger of the written one and the count of `required`) and `minItems: 0`,
    /// `uniqueItems: false` on every array. Those that say nothing `required` and the type
    /// don't say go: the document never wrote them, and a missing property would be reported
    /// twice, once at a keyword that isn't there.
    static func withoutCompatDefaults(_ schema: JSONValue) -> JSONValue {
        guard case .object(var members) = schema else {
            if case .array(let items) = schema { return .array(items.map(withoutCompatDefaults)) }
            return schema
        }
        for (key, member) in members where !["example", "examples", "default", "enum", "const"].contains(key) {
            members[key] = withoutCompatDefaults(member)
        }
        if case .integer(let minimum)? = members["minProperties"], minimum <= (members["required"]?.arrayValue?.count ?? 0) {
            members.removeValue(forKey: "minProperties")
        }
        if members["minItems"] == .integer(0) { members.removeValue(forKey: "minItems") }
        if members["uniqueItems"] == .bool(false) { members.removeValue(forKey: "uniqueItems") }
        return .object(members)
    }

    private init(isOpenAPI30: Bool) {
        self.isOpenAPI30 = isOpenAPI30
    }

    // MARK: Keywords

    private static let coreKeywords: Set<String> = [
        "type", "format", "enum", "const", "default", "title", "description", "example", "examples",
        "readOnly", "writeOnly", "deprecated", "nullable",
    ]
    private static let numericKeywords: Set<String> = ["multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"]
    private static let stringKeywords: Set<String> = ["maxLength", "minLength", "pattern"]
    private static let arrayKeywords: Set<String> = ["items", "maxItems", "minItems", "uniqueItems"]
    private static let objectKeywords: Set<String> = ["maxProperties", "minProperties", "properties", "additionalProperties", "required"]
    private static let combinators = ["allOf", "anyOf", "oneOf", "not"]

    private enum Kind: String {
        case null, boolean, object, array, number, integer, string
    }

    /// The schema's form and whether it allows null (which makes a combination that has it
    /// among its schemas nullable).
    private mutating func schema(_ value: JSONValue, depth: Int) -> (JSONValue, nullable: Bool)? {
        guard depth < 64, case .object(let members) = value else { return nil }
        if let reference = members["$ref"] {
            guard members.count == 1, case .string(let text) = reference, Self.isComponentSchemaReference(text) else { return nil }
            return (["$ref": reference], false)
        }
        var output: [(String, JSONValue)] = []
        var groups: Set<Kind> = []
        var combinator: String?
        for key in members.keys {
            if Self.coreKeywords.contains(key) { continue }
            if Self.numericKeywords.contains(key) { groups.insert(.number); continue }
            if Self.stringKeywords.contains(key) { groups.insert(.string); continue }
            if Self.arrayKeywords.contains(key) { groups.insert(.array); continue }
            if Self.objectKeywords.contains(key) { groups.insert(.object); continue }
            if Self.combinators.contains(key) {
                guard combinator == nil else { return nil }
                combinator = key
                continue
            }
            if key == "discriminator" {
                // An annotation for tools; kept as written.
                guard members[key]?["propertyName"]?.stringValue != nil else { return nil }
                output.append((key, copied(members[key] ?? .null)))
                continue
            }
            // Any other keyword (`prefixItems`, `$defs`, …) is left to OpenAPIKit.
            guard key.lowercased().hasPrefix("x-") else { return nil }
            output.append((key.hasPrefix("x-") ? key : "x-" + key, copied(members[key] ?? .null)))
        }
        // 3.0 reads `nullable`; 3.1 reads it too, with a warning this translation leaves to OpenAPIKit.
        var nullable = false
        if let flag = members["nullable"] {
            guard isOpenAPI30, case .bool(let written) = flag else { return nil }
            nullable = written
        }
        var typeHint: Kind?
        if let type = members["type"] {
            switch type {
            case .string(let name):
                guard let kind = Kind(rawValue: name), !(isOpenAPI30 && kind == .null) else { return nil }
                typeHint = kind
                if kind == .null { nullable = true }
            case .array(let names) where !isOpenAPI30:
                var kinds: [Kind] = []
                for name in names {
                    guard case .string(let text) = name, let kind = Kind(rawValue: text) else { return nil }
                    if kind == .null { nullable = true } else { kinds.append(kind) }
                }
                guard kinds.count <= 1 else { return nil }
                typeHint = kinds.first
            default:
                return nil
            }
        }

        if let combinator {
            var branchesNullable = false
            if combinator == "not" {
                guard let (form, _) = schema(members["not"] ?? .null, depth: depth + 1) else { return nil }
                output.append(("not", form))
            } else {
                guard case .array(let branches) = members[combinator] else { return nil }
                var forms: [JSONValue] = []
                forms.reserveCapacity(branches.count)
                for branch in branches {
                    guard let (form, branchNullable) = schema(branch, depth: depth + 1) else { return nil }
                    forms.append(form)
                    branchesNullable = branchesNullable || branchNullable
                }
                output.append((combinator, .array(forms)))
            }
            if groups.isEmpty, typeHint == nil {
                guard core(members, kind: nil, nullable: nullable || branchesNullable, into: &output) else { return nil }
                return (Self.sortedObject(output), nullable || branchesNullable)
            }
            // A type and its keywords beside the combination (`type: object`, `properties`,
            // `required` beside a `oneOf`) constrain the value too: read as written below
            // (OpenAPIKit drops them).
        }

        var kind = typeHint
        if let typeHint {
            let expected: Kind = typeHint == .integer ? .number : typeHint
            guard groups.subtracting([expected]).isEmpty else { return nil }
        } else {
            guard groups.count <= 1 else { return nil }
            kind = groups.first
        }
        switch kind {
        case .number?, .integer?:
            guard numeric(members, integer: kind == .integer, into: &output) else { return nil }
        case .string?:
            // 3.0's `byte` and `binary` formats become a 3.1 `contentEncoding`.
            if isOpenAPI30, let format = members["format"]?.stringValue, format == "byte" || format == "binary" { return nil }
            guard integer(members["maxLength"], "maxLength", into: &output),
                  integer(members["minLength"], "minLength", into: &output) else { return nil }
            if let pattern = members["pattern"] {
                guard case .string = pattern else { return nil }
                output.append(("pattern", pattern))
            }
        case .array?:
            if let items = members["items"] {
                guard let (form, _) = schema(items, depth: depth + 1) else { return nil }
                output.append(("items", form))
            }
            guard integer(members["maxItems"], "maxItems", into: &output) else { return nil }
            // OpenAPIKitCompat carries 3.0's defaults over as written values, which
            // `withoutCompatDefaults` takes off again: the defaults constrain nothing.
            if isOpenAPI30 {
                let minItems: JSONValue? = members["minItems"] == .integer(0) ? Optional.none : members["minItems"]
                let uniqueItems: JSONValue? = members["uniqueItems"] == .bool(false) ? Optional.none : members["uniqueItems"]
                guard integer(minItems, "minItems", into: &output), boolean(uniqueItems, "uniqueItems", into: &output) else { return nil }
            } else {
                guard integer(members["minItems"], "minItems", into: &output),
                      boolean(members["uniqueItems"], "uniqueItems", into: &output) else { return nil }
            }
        case .object?:
            guard object(members, depth: depth, into: &output) else { return nil }
        case .null?, .boolean?, nil:
            break
        }
        guard core(members, kind: kind, nullable: nullable, into: &output) else { return nil }
        return (Self.sortedObject(output), nullable)
    }

    /// What every schema may have: type, format, allowed values, default, texts, examples, permissions.
    private mutating func core(_ members: JSONObject, kind: Kind?, nullable: Bool, into output: inout [(String, JSONValue)]) -> Bool {
        let typeName = kind == .null ? nil : kind?.rawValue
        switch (typeName, nullable) {
        case (let name?, true): output.append(("type", [.string(name), "null"]))
        case (let name?, false): output.append(("type", .string(name)))
        case (nil, true):
            output.append(("type", "null"))
            mayHoldNullType = true
        case (nil, false): break
        }
        if let format = members["format"] {
            guard case .string(let text) = format, !text.isEmpty else { return false }
            output.append(("format", format))
        }
        var allowed: [JSONValue]?
        if let values = members["enum"] {
            guard case .array(let items) = values else { return false }
            allowed = items
        } else if let value = members["const"], !isOpenAPI30 {
            allowed = [value]
        } else if members["const"] != nil {
            return false
        }
        if let allowed {
            if kind == .string {
                guard allowed.allSatisfy({ $0.stringValue != nil || (nullable && $0.isNull) }) else { return false }
            }
            let forms = allowed.map { copied($0) }
            if forms.count == 1 { output.append(("const", forms[0])) } else { output.append(("enum", .array(forms))) }
        }
        // A null default is no default; a null example is one in 3.1 only.
        if let value = members["default"], !value.isNull { output.append(("default", copied(value))) }
        for key in ["title", "description"] {
            guard let text = members[key] else { continue }
            guard case .string = text else { return false }
            output.append((key, text))
        }
        if let example = members["example"] {
            if !(isOpenAPI30 && example.isNull) { output.append(("examples", [copied(example)])) }
        } else if let examples = members["examples"] {
            guard !isOpenAPI30, case .array(let items) = examples else { return false }
            if !items.isEmpty { output.append(("examples", .array(items.map { copied($0) }))) }
        }
        let readOnly = members["readOnly"].map(\.boolValue)
        let writeOnly = members["writeOnly"].map(\.boolValue)
        let deprecated = members["deprecated"].map(\.boolValue)
        if readOnly == .some(nil) || writeOnly == .some(nil) || deprecated == .some(nil) { return false }
        if readOnly == true, writeOnly == true { return false }
        if deprecated == true { output.append(("deprecated", true)) }
        if readOnly == true { output.append(("readOnly", true)) }
        if writeOnly == true { output.append(("writeOnly", true)) }
        return true
    }

    private func numeric(_ members: JSONObject, integer: Bool, into output: inout [(String, JSONValue)]) -> Bool {
        if let multiple = members["multipleOf"] {
            if integer {
                guard case .integer = multiple else { return false }
                output.append(("multipleOf", multiple))
            } else {
                guard let value = multiple.doubleValue else { return false }
                output.append(("multipleOf", Self.encoded(value)))
            }
        }
        for (bound, exclusiveKey) in [("maximum", "exclusiveMaximum"), ("minimum", "exclusiveMinimum")] {
            var value = members[bound]
            var exclusive = false
            if isOpenAPI30 {
                if let flag = members[exclusiveKey] {
                    guard case .bool(let written) = flag else { return false }
                    exclusive = written
                }
            } else if let written = members[exclusiveKey] {
                // 3.1's `exclusiveMaximum` is the bound itself; the other goes unread.
                value = written
                exclusive = true
            }
            guard let value else { continue }
            guard let number = value.doubleValue else { return false }
            let form: JSONValue
            if integer {
                switch value {
                case .integer: form = value
                default:
                    guard let exact = Int(exactly: number) else { return false }
                    form = .integer(exact)
                }
            } else {
                form = Self.encoded(number)
            }
            output.append((exclusive ? exclusiveKey : bound, form))
        }
        return true
    }

    private mutating func object(_ members: JSONObject, depth: Int, into output: inout [(String, JSONValue)]) -> Bool {
        var properties = JSONObject()
        if let written = members["properties"] {
            guard case .object(let entries) = written else { return false }
            properties.reserveCapacity(entries.count)
            for (name, entry) in entries {
                guard name != "yamlAnchor", name != "yamlTag", let (form, _) = schema(entry, depth: depth + 1) else { return false }
                properties[name] = form
            }
        }
        var required: Set<String> = []
        if let written = members["required"] {
            guard case .array(let names) = written else { return false }
            for name in names {
                // A required name without a property becomes an inferred one: left to OpenAPIKit.
                guard case .string(let text) = name, properties[text] != nil else { return false }
                required.insert(text)
            }
        }
        guard integer(members["maxProperties"], "maxProperties", into: &output) else { return false }
        if !properties.isEmpty {
            output.append(("properties", Self.sortedObject(properties.elements.map { ($0.key, $0.value) })))
        }
        if let additional = members["additionalProperties"] {
            switch additional {
            case .bool: output.append(("additionalProperties", additional))
            default:
                guard let (form, _) = schema(additional, depth: depth + 1) else { return false }
                output.append(("additionalProperties", form))
            }
        }
        if !required.isEmpty {
            output.append(("required", .array(properties.keys.filter(required.contains).map { .string($0) })))
        }
        if isOpenAPI30 {
            // Only a written minimum above the required count says more than `required` does
            // (OpenAPIKitCompat's computed one is taken off its forms: `withoutCompatDefaults`).
            if let written = members["minProperties"] {
                guard case .integer(let value) = written else { return false }
                if value > required.count { output.append(("minProperties", written)) }
            }
        } else {
            guard integer(members["minProperties"], "minProperties", into: &output) else { return false }
        }
        return true
    }

    private func integer(_ value: JSONValue?, _ key: String, into output: inout [(String, JSONValue)]) -> Bool {
        guard let value else { return true }
        guard case .integer = value else { return false }
        output.append((key, value))
        return true
    }

    private func boolean(_ value: JSONValue?, _ key: String, into output: inout [(String, JSONValue)]) -> Bool {
        guard let value else { return true }
        guard case .bool = value else { return false }
        output.append((key, value))
        return true
    }

    // MARK: Values

    /// A value OpenAPIKit holds as `AnyCodable` (an example, a default, an allowed value, an
    /// extension), as it encodes it.
    private mutating func copied(_ value: JSONValue) -> JSONValue {
        switch value {
        case .number(let number): return Self.encoded(number)
        case .array(let items):
            mayHoldNullType = true
            return .array(items.map { copied($0) })
        case .object(let members):
            mayHoldNullType = true
            var entries: [(String, JSONValue)] = []
            entries.reserveCapacity(members.count)
            for (key, member) in members where key != "yamlAnchor" && key != "yamlTag" {
                entries.append((key, copied(member)))
            }
            return Self.sortedObject(entries)
        default: return value
        }
    }

    /// A `Double` as `JSONEncoder` writes it and the JSON parser reads it back: a whole number
    /// below 10¹⁶ without a fraction (an integer), any other with one.
    private static func encoded(_ number: Double) -> JSONValue {
        if number.rounded() == number, abs(number) < 1e16 { return .integer(Int(number)) }
        return .number(number)
    }

    /// Members in `JSONEncoder`'s `sortedKeys` order: by their UTF-8 bytes.
    private static func sortedObject(_ entries: [(String, JSONValue)]) -> JSONValue {
        let sorted = entries.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        return .object(JSONObject(sorted, uniquingKeysWith: { first, _ in first }))
    }

    /// `#/components/schemas/<name>`, the name as OpenAPI allows it (`^[a-zA-Z0-9.\-_]+$`).
    static func isComponentSchemaReference(_ reference: String) -> Bool {
        let prefix = "#/components/schemas/"
        guard reference.hasPrefix(prefix) else { return false }
        return isComponentName(reference.utf8.dropFirst(prefix.utf8.count))
    }

    static func isComponentName(_ name: Substring.UTF8View) -> Bool {
        !name.isEmpty && name.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x2D || byte == 0x5F
        }
    }
}
