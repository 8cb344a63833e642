// Example values from JSON Schemas and loose schemas from example bodies: the two ends of
// Apiary's precedence (a body from the schema when nothing else gives one, and a schema from
// the body when nothing else gives one). Every generated value is written to satisfy its schema
// as Kagami's validator reads it (formats asserted); where the schema offers choices (examples,
// enums, oneOf/anyOf branches, several types) each candidate is checked with the validator.
import KagamiJSON
import KagamiJSONSchema
import Synchronization

public enum JSONSchemaExample {
    /// `$schema` noted on schemas derived from an example body.
    public static let derivedDialect = "http://json-schema.org/draft-04/schema#"

    /// Deeper schemas than this yield nothing: keeps self-referencing schemas finite.
    static let maximumDepth = 32

    /// A value that fits `schema`, preferring its `example`, `examples`, `default`, `const`
    /// and `enum` (the first that validates), then building one from its keywords. With a
    /// direction, `readOnly` properties are left out of requests and `writeOnly` ones out of
    /// responses.
    public static func example(for schema: JSONValue, direction: JSONSchema.Direction? = nil) -> JSONValue {
        // A large description inlines the same component in thousands of payloads.
        let key = ExampleKey(schema: schema, direction: direction)
        if let known = written.withLock({ $0[key] }) { return known }
        let value = write(schema, direction: direction)
        written.withLock { cache in
            if cache.count >= 2048 { cache.removeAll() }
            cache[key] = value
        }
        return value
    }

    struct ExampleKey: Hashable {
        var schema: JSONValue
        var direction: JSONSchema.Direction?
    }

    private static let written = Mutex<[ExampleKey: JSONValue]>([:])

    /// Subschemas compiled to check candidates, shared by every generation (the same property
    /// schemas recur across a description).
    private static let checkers = Mutex<[ExampleKey: JSONSchema?]>([:])

    static func checker(_ schema: JSONValue, direction: JSONSchema.Direction?) -> JSONSchema? {
        let key = ExampleKey(schema: schema, direction: direction)
        if let known = checkers.withLock({ $0[key] }) { return known }
        let compiled = try? JSONSchema(compiling: schema, options: .init(assertsFormat: true, direction: direction))
        checkers.withLock { cache in
            if cache.count >= 4096 { cache.removeAll() }
            cache[key] = .some(compiled)
        }
        return compiled
    }

    private static func write(_ schema: JSONValue, direction: JSONSchema.Direction?) -> JSONValue {
        var writer = ExampleWriter(root: schema, direction: direction)
        let value = writer.value(for: schema, pointer: "", depth: 0, variant: 0) ?? .null
        // Values built without a choice or a merge are valid by construction; the rest are
        // checked whole (the check costs a compilation, and readers write thousands).
        if !writer.uncertain || writer.accepts(value, at: "") { return value }
        // Rare conflicts between keywords: other variants before giving up.
        for variant in 1...3 {
            if let other = writer.value(for: schema, pointer: "", depth: 0, variant: variant), writer.accepts(other, at: "") {
                return other
            }
        }
        return value
    }

    /// A sample string for a `format`, valid for Kagami's validator; nil for unknown formats.
    static func formatSample(_ format: String, variant: Int) -> String? {
        let n = variant % 10
        switch format {
        case "date-time": return "1970-01-0\(n + 1)T00:00:00Z"
        case "date": return "1970-01-0\(n + 1)"
        case "time": return "12:00:0\(n)Z"
        case "email", "idn-email": return "user\(variant == 0 ? "" : String(variant))@example.com"
        case "hostname", "idn-hostname": return variant == 0 ? "example.com" : "host\(variant).example.com"
        case "ipv4": return "192.0.2.\(1 + variant % 250)"
        case "ipv6": return "2001:db8::\(1 + variant % 9)"
        case "uri", "url", "iri": return "https://example.com/\(variant == 0 ? "" : "item/\(variant)")"
        case "uri-reference", "iri-reference": return "/item/\(variant)"
        case "uri-template": return "https://example.com/items/{id}"
        case "uuid": return "00000000-0000-4000-8000-00000000000\(n)"
        case "duration": return "P\(variant + 1)D"
        case "json-pointer": return "/item/\(variant)"
        case "relative-json-pointer": return "\(variant)"
        case "regex": return "^[a-z]+$"
        case "byte": return variant == 0 ? "" : "AAAA"
        default: return nil
        }
    }

    /// A loose schema an example body satisfies: types and property names, nothing required,
    /// arrays by their first item.
    public static func schema(describing value: JSONValue) -> JSONValue {
        var root = describe(value, depth: 0)
        if case .object(var members) = root {
            members.updateValue(.string(derivedDialect), forKey: "$schema", insertingAt: 0)
            root = .object(members)
        }
        return root
    }

    private static func describe(_ value: JSONValue, depth: Int) -> JSONValue {
        guard depth < maximumDepth else { return [:] }
        switch value {
        case .null: return ["type": "null"]
        case .bool: return ["type": "boolean"]
        case .integer, .number: return ["type": "number"]
        case .string: return ["type": "string"]
        case .array(let items):
            guard let first = items.first else { return ["type": "array"] }
            return ["type": "array", "items": describe(first, depth: depth + 1)]
        case .object(let members):
            var properties = JSONObject()
            for (key, member) in members { properties[key] = describe(member, depth: depth + 1) }
            return ["type": "object", "properties": .object(properties)]
        }
    }
}

/// One generation over one root schema: local `$ref`s resolve against the root, and candidates
/// are checked with the root compiled at the schema's pointer (once per pointer).
struct ExampleWriter {
    let root: JSONValue
    let direction: JSONSchema.Direction?
    /// Compiled subschemas by pointer; nil when the subschema does not compile.
    private var compiled: [String: JSONSchema?] = [:]
    /// How often each `$ref` target is open on the current path: a second entry is cut off.
    private var openReferences: [String: Int] = [:]
    /// Whether the value written may break the schema: something was merged, chosen between
    /// branches, or written from keywords this writer does not follow.
    private(set) var uncertain = false

    /// Keywords written around, not from: their presence makes the value uncertain.
    static let unfollowedKeywords: Set<String> = [
        "not", "dependentSchemas", "dependencies", "unevaluatedProperties", "unevaluatedItems", "propertyNames",
        "minContains", "maxContains", "contains", "uniqueItems", "$dynamicRef", "minProperties", "maxProperties",
        "dependentRequired", "patternProperties",
    ]

    init(root: JSONValue, direction: JSONSchema.Direction?) {
        self.root = root
        self.direction = direction
    }

    /// Whether the subschema at `pointer` accepts `value`; true when it cannot be compiled
    /// (nothing to hold the value to) or when `pointer` is nil (a schema made while writing).
    mutating func accepts(_ value: JSONValue, at pointer: String?) -> Bool {
        guard let pointer else { return true }
        if compiled[pointer] == nil {
            let options = JSONSchema.Options(assertsFormat: true, direction: direction)
            // A subschema without references compiles alone (with the root's dialect), without
            // the rest of the document.
            if let tokens = JSONPointer.tokens(pointer), case .object(var alone)? = JSONPointer.resolve(tokens, in: root),
               !Self.refers(.object(alone)) {
                if let dialect = root["$schema"], alone["$schema"] == nil { alone["$schema"] = dialect }
                compiled[pointer] = .some(JSONSchemaExample.checker(.object(alone), direction: direction))
            } else {
                compiled[pointer] = .some(try? JSONSchema(compiling: root, at: pointer, options: options))
            }
        }
        guard let schema = compiled[pointer] ?? nil else { return true }
        return schema.isValid(value)
    }

    /// Whether `schema` holds a reference anywhere.
    static func refers(_ schema: JSONValue) -> Bool {
        switch schema {
        case .object(let members):
            if members["$ref"] != nil || members["$dynamicRef"] != nil || members["$recursiveRef"] != nil { return true }
            return members.values.contains(where: refers)
        case .array(let items): return items.contains(where: refers)
        default: return false
        }
    }

    /// A value for `schema` found at `pointer` in the root (nil for a schema merged while
    /// writing); nil when none can be written within the depth and reference limits.
    mutating func value(for schema: JSONValue, pointer: String?, depth: Int, variant: Int) -> JSONValue? {
        guard depth < JSONSchemaExample.maximumDepth else { return nil }
        switch schema {
        case .bool(let allowed): return allowed ? .null : nil
        case .object: break
        default: return .null
        }
        guard case .object(var object) = schema else { return .null }
        if case .string(let reference)? = object["$ref"] {
            guard let target = self.target(of: reference) else { return .null }
            if openReferences[target.pointer, default: 0] >= 1 { return nil }
            openReferences[target.pointer, default: 0] += 1
            defer { openReferences[target.pointer, default: 0] -= 1 }
            object["$ref"] = nil
            if object.keys.allSatisfy(Self.annotationKeywords.contains) {
                return value(for: target.schema, pointer: target.pointer, depth: depth + 1, variant: variant)
            }
            guard case .object(let referenced) = target.schema else { return value(for: target.schema, pointer: target.pointer, depth: depth + 1, variant: variant) }
            uncertain = true
            return value(for: .object(merge([referenced, object])), pointer: nil, depth: depth + 1, variant: variant)
        }
        if !uncertain, object.keys.contains(where: Self.unfollowedKeywords.contains) { uncertain = true }
        if case .string? = object["$ref"] {} else if object["$ref"] != nil { uncertain = true }
        // What the document offers, when it is valid here.
        var offered: [JSONValue] = []
        if let value = object["example"] { offered.append(value) }
        offered += object["examples"]?.arrayValue ?? []
        if let value = object["default"] { offered.append(value) }
        if let value = object["const"] { offered.append(value) }
        let members = object["enum"]?.arrayValue ?? []
        // An empty enum allows nothing: an optional property with it is left out.
        if object["enum"]?.arrayValue?.isEmpty == true { return nil }
        offered += members.count > variant ? Array(members[variant...]) + members[..<variant] : members
        for candidate in offered where accepts(candidate, at: pointer) { return candidate }
        if let fixed = object["const"] ?? members.first { return fixed }

        for keyword in ["oneOf", "anyOf"] {
            guard let branches = object[keyword]?.arrayValue, !branches.isEmpty else { continue }
            object[keyword] = nil
            uncertain = true
            // Branches that are not only `null` first.
            let order = branches.indices.sorted { isNull(branches[$0]) ? false : isNull(branches[$1]) }
            var last: JSONValue?
            for index in order.indices {
                let branchIndex = order[(index + variant) % order.count]
                guard let branch = resolved(branches[branchIndex]) else { continue }
                let branchPointer = pointer.map { "\($0)/\(keyword)/\(branchIndex)" }
                var candidate: JSONValue?
                if object.keys.allSatisfy(Self.annotationKeywords.contains) {
                    candidate = value(for: branches[branchIndex], pointer: branchPointer, depth: depth + 1, variant: variant)
                } else {
                    candidate = value(for: .object(merge([object, branch])), pointer: nil, depth: depth + 1, variant: variant)
                }
                guard var found = candidate else { continue }
                found = discriminated(found, discriminator: object["discriminator"], branch: branches[branchIndex], index: branchIndex)
                last = found
                if accepts(found, at: pointer) { return found }
            }
            return last
        }

        // After the branches: an allOf part that repeats a branch keyword is merged again
        // without it, so merging ends.
        if let parts = object["allOf"]?.arrayValue, !parts.isEmpty {
            object["allOf"] = nil
            uncertain = true
            var merged: [JSONObject] = [object]
            for part in parts {
                guard let resolved = self.resolved(part) else { return nil }
                merged.append(resolved)
            }
            return value(for: .object(merge(merged)), pointer: nil, depth: depth + 1, variant: variant)
        }
        // if/then/else: a value for each outcome, kept when the whole schema takes it.
        if object["if"] != nil, object["then"] != nil || object["else"] != nil {
            uncertain = true
            var rest = object
            let outcomes = [rest.removeValue(forKey: "then"), rest.removeValue(forKey: "else")]
            rest["if"] = nil
            var last: JSONValue?
            for outcome in outcomes {
                guard let outcome, let branch = resolved(outcome) else { continue }
                guard let candidate = value(for: .object(merge([rest, branch])), pointer: nil, depth: depth + 1, variant: variant) else { continue }
                last = candidate
                if accepts(candidate, at: pointer) { return candidate }
            }
            if let last { return last }
        }
        var types: [String]
        switch object["type"] {
        case .string(let type)?: types = [type]
        case .array(let list)?: types = list.compactMap(\.stringValue).sorted { $0 != "null" && $1 == "null" }
        default:
            if object["properties"] != nil || object["required"] != nil || object["additionalProperties"] != nil {
                types = ["object"]
            } else if object["items"] != nil || object["prefixItems"] != nil {
                types = ["array"]
            } else if object["pattern"] != nil || object["minLength"] != nil || object["format"]?.stringValue.flatMap({ JSONSchemaExample.formatSample($0, variant: 0) }) != nil {
                types = ["string"]
            } else if object["minimum"] != nil || object["maximum"] != nil || object["multipleOf"] != nil
                || ["int32", "int64", "float", "double"].contains(object["format"]?.stringValue ?? "") {
                types = ["number"]
            } else {
                types = ["null"]
            }
        }
        if object["nullable"]?.boolValue == true, !types.contains("null") { types.append("null") }
        var last: JSONValue?
        for type in types {
            guard let candidate = typed(type, object, pointer: pointer, depth: depth, variant: variant) else { continue }
            if types.count == 1 && object["not"] == nil { return candidate }
            last = candidate
            if accepts(candidate, at: pointer) { return candidate }
        }
        return last
    }

    /// Keywords that say nothing about which values are valid.
    static let annotationKeywords: Set<String> = [
        "description", "title", "summary", "$comment", "deprecated", "externalDocs", "xml", "discriminator",
        "readOnly", "writeOnly", "example", "examples", "default", "$schema", "$id", "$anchor", "$defs", "definitions",
    ]

    private func isNull(_ schema: JSONValue) -> Bool {
        schema["type"]?.stringValue == "null" || schema["const"] == .null
    }

    /// A local `$ref` (`#/$defs/Pet`, `#/components/schemas/Pet`) and what it points to.
    func target(of reference: String) -> (pointer: String, schema: JSONValue)? {
        guard reference.hasPrefix("#") else { return nil }
        let pointer = String(reference.dropFirst()).removingPercentEscapes
        guard let tokens = JSONPointer.tokens(pointer), let schema = JSONPointer.resolve(tokens, in: root) else { return nil }
        return (pointer, schema)
    }

    /// An object schema with its local `$ref` followed (once), for merging.
    func resolved(_ schema: JSONValue) -> JSONObject? {
        switch schema {
        case .bool(true): return [:]
        case .object(var object):
            if case .string(let reference)? = object["$ref"], let target = target(of: reference), case .object(let referenced) = target.schema {
                object["$ref"] = nil
                return merge([referenced, object])
            }
            return object
        default: return nil
        }
    }

    /// Sets an OpenAPI discriminator's property to the name that selects `branch`.
    private func discriminated(_ value: JSONValue, discriminator: JSONValue?, branch: JSONValue, index: Int) -> JSONValue {
        guard case .object(var members) = value, let name = discriminator?["propertyName"]?.stringValue else { return value }
        let declared = resolved(branch)?["properties"]?[name]
        if declared?["const"] != nil || declared?["enum"] != nil { return value }
        var chosen: String?
        let reference = branch["$ref"]?.stringValue
        let mapping = discriminator?["mapping"]?.objectValue ?? [:]
        if let reference {
            chosen = mapping.first { $0.value.stringValue == reference }?.key
            chosen = chosen ?? reference.split(separator: "/").last.map(String.init)
        }
        if chosen == nil, let title = branch["title"]?.stringValue {
            chosen = mapping.first { $0.value.stringValue?.hasSuffix("/\(title)") == true }?.key ?? title
        }
        if chosen == nil, index < mapping.count { chosen = mapping.keys[index] }
        guard let chosen else { return value }
        members[name] = .string(chosen)
        return .object(members)
    }

    /// Merges schema objects as `allOf` means them: properties and requirements combined,
    /// the narrower bound kept.
    func merge(_ parts: [JSONObject]) -> JSONObject {
        var result = JSONObject()
        for part in parts {
            for (key, value) in part {
                guard let existing = result[key] else {
                    result[key] = value
                    continue
                }
                switch key {
                case "properties":
                    var properties = existing.objectValue ?? [:]
                    for (name, schema) in value.objectValue ?? [:] {
                        if let other = properties[name] {
                            properties[name] = ["allOf": [other, schema]]
                        } else {
                            properties[name] = schema
                        }
                    }
                    result[key] = .object(properties)
                case "required":
                    var names = existing.arrayValue ?? []
                    for name in value.arrayValue ?? [] where !names.contains(name) { names.append(name) }
                    result[key] = .array(names)
                case "minimum", "minLength", "minItems", "minProperties":
                    if let a = existing.doubleValue, let b = value.doubleValue, b > a { result[key] = value }
                case "maximum", "maxLength", "maxItems", "maxProperties":
                    if let a = existing.doubleValue, let b = value.doubleValue, b < a { result[key] = value }
                case "type":
                    let a = Self.typeNames(existing), b = Self.typeNames(value)
                    var common = a.filter { b.contains($0) || ($0 == "number" && b.contains("integer")) }
                    common = common.map { $0 == "number" && b.contains("integer") ? "integer" : $0 }
                    if b.contains("number") { common += a.filter { $0 == "integer" && !common.contains($0) } }
                    result[key] = common.count == 1 ? .string(common[0]) : .array(common.map(JSONValue.string))
                case "allOf":
                    result[key] = .array((existing.arrayValue ?? []) + (value.arrayValue ?? []))
                case "example", "examples", "default", "description", "title":
                    break
                default:
                    if existing != value {
                        // Two different values for one keyword: both must hold.
                        var extra = result["allOf"]?.arrayValue ?? []
                        extra.append(.object([key: value]))
                        result["allOf"] = .array(extra)
                    }
                }
            }
        }
        // Examples written for a single part no longer speak for the whole.
        if parts.count > 1 {
            result["example"] = nil
            result["examples"] = nil
            result["default"] = nil
        }
        return result
    }

    private static func typeNames(_ type: JSONValue) -> [String] {
        if let name = type.stringValue { return [name] }
        return type.arrayValue?.compactMap(\.stringValue) ?? []
    }

    // MARK: Values by type

    private mutating func typed(_ type: String, _ object: JSONObject, pointer: String?, depth: Int, variant: Int) -> JSONValue? {
        switch type {
        case "object": return self.object(object, pointer: pointer, depth: depth, variant: variant)
        case "array": return array(object, pointer: pointer, depth: depth, variant: variant)
        case "string": return string(object, variant: variant).map(JSONValue.string)
        case "integer", "number": return number(object, integer: type == "integer", variant: variant)
        case "boolean": return .bool(variant % 2 == 1)
        default: return .null
        }
    }

    private func isHidden(_ schema: JSONValue) -> Bool {
        guard let direction else { return false }
        let keyword = direction == .request ? "readOnly" : "writeOnly"
        if schema[keyword]?.boolValue == true { return true }
        if let reference = schema["$ref"]?.stringValue, let target = target(of: reference) {
            return target.schema[keyword]?.boolValue == true
        }
        return false
    }

    private mutating func object(_ object: JSONObject, pointer: String?, depth: Int, variant: Int) -> JSONValue? {
        let properties = object["properties"]?.objectValue ?? [:]
        var required = object["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
        var members = JSONObject()
        var optional: [String] = []
        for (key, schema) in properties {
            let isRequired = required.contains(key)
            if isHidden(schema) { continue }
            let memberPointer = pointer.map { "\($0)/properties/\(JSONPointer.escape(key))" }
            guard let member = value(for: schema, pointer: memberPointer, depth: depth + 1, variant: variant) else {
                if isRequired { return nil }
                continue
            }
            members[key] = member
            if !isRequired { optional.append(key) }
        }
        // dependentRequired: what a present property brings with it.
        for (key, names) in object["dependentRequired"]?.objectValue ?? [:] where members[key] != nil {
            required += names.arrayValue?.compactMap(\.stringValue) ?? []
        }
        let additional = object["additionalProperties"]
        for key in required where members[key] == nil {
            uncertain = true
            if let schema = properties[key] {
                if isHidden(schema) { continue }
                return nil
            }
            members[key] = value(for: extraSchema(for: key, object), pointer: nil, depth: depth + 1, variant: variant) ?? ""
        }
        var index = 1
        while members.count < (object["minProperties"]?.intValue ?? 0), index < 1000 {
            let key = extraKey(object, index: index)
            index += 1
            guard members[key] == nil else { continue }
            if additional?.boolValue == false, object["patternProperties"] == nil { break }
            members[key] = value(for: extraSchema(for: key, object), pointer: nil, depth: depth + 1, variant: variant) ?? ""
        }
        if let maximum = object["maxProperties"]?.intValue {
            for key in optional.reversed() where members.count > maximum { members[key] = nil }
        }
        return .object(members)
    }

    /// A name for a property beyond `properties`: from `propertyNames` or a `patternProperties`
    /// pattern when there is one.
    private func extraKey(_ object: JSONObject, index: Int) -> String {
        let fallback = "property\(index)"
        var patterns: [String] = []
        if let pattern = object["propertyNames"]?["pattern"]?.stringValue { patterns.append(pattern) }
        if object["additionalProperties"]?.boolValue == false {
            patterns += object["patternProperties"]?.objectValue?.keys.map { $0 } ?? []
        }
        guard let pattern = patterns.first else { return fallback }
        let names = PatternSample.strings(matching: pattern, lengths: 1...32).filter { PatternSample.matches($0, pattern: pattern) }
        return names.isEmpty ? fallback : names[(index - 1) % names.count] + (index > names.count ? String(index) : "")
    }

    private func extraSchema(for key: String, _ object: JSONObject) -> JSONValue {
        for (pattern, schema) in object["patternProperties"]?.objectValue ?? [:] where PatternSample.matches(key, pattern: pattern) {
            return schema
        }
        if let additional = object["additionalProperties"], additional.objectValue != nil { return additional }
        return ["type": "string"]
    }

    private mutating func array(_ object: JSONObject, pointer: String?, depth: Int, variant: Int) -> JSONValue? {
        let minimum = object["minItems"]?.intValue ?? 0
        let maximum = object["maxItems"]?.intValue ?? Int.max
        var prefix: [JSONValue] = object["prefixItems"]?.arrayValue ?? []
        var prefixKeyword = "prefixItems"
        var rest: JSONValue? = object["items"]
        var restKeyword = "items"
        if let tuple = object["items"]?.arrayValue {
            prefix = tuple
            prefixKeyword = "items"
            rest = object["additionalItems"]
            restKeyword = "additionalItems"
        }
        let unique = object["uniqueItems"]?.boolValue == true
        var count = min(max(minimum, 1, rest == nil ? prefix.count : 0), maximum, 1000)
        if rest?.boolValue == false { count = min(count, prefix.count) }
        var items: [JSONValue] = []
        for index in 0..<count {
            let schema: JSONValue
            let itemPointer: String?
            if index < prefix.count {
                schema = prefix[index]
                itemPointer = pointer.map { "\($0)/\(prefixKeyword)/\(index)" }
            } else {
                schema = rest ?? true
                itemPointer = rest == nil ? nil : pointer.map { "\($0)/\(restKeyword)" }
            }
            guard let item = value(for: schema, pointer: itemPointer, depth: depth + 1, variant: unique ? variant + index : variant) else {
                if index >= minimum { break }
                return nil
            }
            items.append(item)
        }
        if let contains = object["contains"] {
            let containsPointer = pointer.map { "\($0)/contains" }
            if let item = value(for: contains, pointer: containsPointer, depth: depth + 1, variant: variant), !items.contains(item) {
                if items.count >= maximum, !items.isEmpty { items.removeLast() }
                items.insert(item, at: 0)
            }
        }
        return .array(items)
    }

    private mutating func string(_ object: JSONObject, variant: Int) -> String? {
        let minimum = object["minLength"]?.intValue ?? 0
        let maximum = max(minimum, object["maxLength"]?.intValue ?? Int.max)
        let pattern = object["pattern"]?.stringValue
        let format = object["format"]?.stringValue
        var candidates: [String] = []
        if let format, let sample = JSONSchemaExample.formatSample(format, variant: variant) { candidates.append(sample) }
        if let pattern {
            for sample in PatternSample.strings(matching: pattern, lengths: minimum...maximum) {
                candidates.append(sample)
                // An unanchored pattern matches inside a longer string.
                let missing = minimum - sample.unicodeScalars.count
                if missing > 0 {
                    candidates.append(sample + String(repeating: "a", count: missing))
                    candidates.append(String(repeating: "a", count: missing) + sample)
                }
            }
        }
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let letter = letters[variant % letters.count]
        if variant == 0 { candidates.append(String(repeating: "a", count: minimum)) }
        candidates.append(String(repeating: letter, count: max(minimum, 1)) + (variant >= letters.count ? String(variant) : ""))
        var fallback: String?
        for candidate in candidates {
            let length = candidate.unicodeScalars.count
            guard length >= minimum, length <= maximum else { continue }
            if let pattern, !PatternSample.matches(candidate, pattern: pattern) { continue }
            fallback = fallback ?? candidate
            if let format, JSONSchema.string(candidate, hasFormat: format) == false { continue }
            return candidate
        }
        uncertain = true
        return fallback ?? candidates.first
    }

    private mutating func number(_ object: JSONObject, integer: Bool, variant: Int) -> JSONValue {
        var lower = object["minimum"]?.doubleValue ?? -.infinity
        var upper = object["maximum"]?.doubleValue ?? .infinity
        var lowerOpen = false, upperOpen = false
        switch object["exclusiveMinimum"] {
        case .bool(true)?: lowerOpen = true  // draft 4
        case let value? where value.doubleValue != nil:
            if let bound = value.doubleValue, bound >= lower {
                lower = bound
                lowerOpen = true
            }
        default: break
        }
        switch object["exclusiveMaximum"] {
        case .bool(true)?: upperOpen = true
        case let value? where value.doubleValue != nil:
            if let bound = value.doubleValue, bound <= upper {
                upper = bound
                upperOpen = true
            }
        default: break
        }
        let integer = integer || object["format"]?.stringValue == "int32" || object["format"]?.stringValue == "int64"
        if object["format"]?.stringValue == "int32" {
            lower = max(lower, Double(Int32.min))
            upper = min(upper, Double(Int32.max))
        }
        var step = object["multipleOf"]?.doubleValue.flatMap { $0 > 0 ? $0 : nil }
        let decimals = object["multipleOf"].map(Self.decimals) ?? 0
        if integer {
            // The smallest multiple of the step that is whole.
            var whole = step ?? 1
            var k = 1.0
            while let base = step, (base * k).rounded() != base * k || base * k == 0, k < 1000 {
                k += 1
                whole = base * k
            }
            step = whole.rounded() == whole ? whole : 1
        }
        func fits(_ value: Double) -> Bool {
            (lowerOpen ? value > lower : value >= lower) && (upperOpen ? value < upper : value <= upper)
        }
        var chosen: Double
        if let step {
            var k = max((lower / step).rounded(.up), min(0, (upper / step).rounded(.down)))
            if !k.isFinite { k = 0 }
            if !fits(k * step) { k += k * step <= lower ? 1 : -1 }
            if fits((k + Double(variant)) * step) { k += Double(variant) }
            chosen = k * step
        } else if fits(Double(variant)) {
            chosen = Double(variant)
        } else if fits(0) {
            chosen = 0
        } else if lower.isFinite, lower > 0 || !upper.isFinite {
            chosen = lowerOpen ? (upper.isFinite ? min(lower + 1, (lower + upper) / 2) : lower + 1) : lower
        } else {
            chosen = upperOpen ? (lower.isFinite ? max(upper - 1, (lower + upper) / 2) : upper - 1) : upper
        }
        if !fits(chosen) { uncertain = true }
        if decimals > 0 {
            let scale = (0..<decimals).reduce(1.0) { value, _ in value * 10 }
            chosen = (chosen * scale).rounded() / scale
        }
        if chosen.rounded() == chosen, abs(chosen) < 9_007_199_254_740_992 { return .integer(Int(chosen)) }
        return .number(chosen)
    }

    /// Digits after the decimal point in a number as written (0.01 → 2), for rounding
    /// multiples of it.
    private static func decimals(_ value: JSONValue) -> Int {
        guard case .number(let number) = value else { return 0 }
        let text = "\(number)"
        if text.contains("e") { return 0 }
        guard let dot = text.firstIndex(of: ".") else { return 0 }
        let digits = text[text.index(after: dot)...]
        return digits == "0" ? 0 : min(digits.count, 12)
    }
}

extension String {
    /// `%XX` escapes in a `$ref` fragment decoded (UTF-8); text that isn't an escape is kept.
    fileprivate var removingPercentEscapes: String {
        guard contains("%") else { return self }
        let source = Array(utf8)
        var bytes: [UInt8] = []
        var i = 0
        while i < source.count {
            if source[i] == UInt8(ascii: "%"), i + 2 < source.count,
               let value = UInt8(String(decoding: source[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                bytes.append(value)
                i += 3
            } else {
                bytes.append(source[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension MessagePayload {
    /// The example body: as written, or written now from the schema when the reader left it to
    /// be (what convert and `kagami contract` show).
    public var exampleBody: String? {
        body ?? (bodySource == .schema ? written(for: nil) : nil)
    }

    /// The body as the mock serves it and the docs page shows it: a body from the schema is
    /// written for its direction (no `readOnly` property in a request, no `writeOnly` one in a
    /// response); any other body as written.
    public func body(for direction: JSONSchema.Direction) -> String? {
        bodySource == .schema ? written(for: direction) : body
    }

    /// A body written from the schema, a string as itself unless the media type is JSON.
    private func written(for direction: JSONSchema.Direction?) -> String? {
        guard let schema else { return body }
        let value = JSONSchemaExample.example(for: schema, direction: direction)
        if case .string(let text) = value, mediaType.map({ !$0.contains("json") }) ?? false { return text }
        return value.serialized(.prettyPrinted)
    }
}

extension ResponseHeader {
    /// The header's example line: `example` (the description's) as the header carries it, else
    /// a value written from the schema for a response (valid by construction); empty with neither.
    public func exampleLine(_ example: JSONValue?) -> String {
        guard let value = example ?? schema.map({ JSONSchemaExample.example(for: $0, direction: .response) }) else { return "" }
        return text(of: value)
    }
}

extension DataStructure {
    /// The example: the one the description gives or renders, else one written now from the
    /// schema.
    public var exampleValue: JSONValue? {
        example ?? schema.map { JSONSchemaExample.example(for: $0) }
    }
}
