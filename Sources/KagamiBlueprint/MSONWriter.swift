// JSON Schemas written as MSON, for the `# Data Structures` of a converted description: named
// types, their properties, items, members and samples, references to other named types by
// name; alternatives of objects (`oneOf`, `anyOf`, an `allOf` of them) as MSON `One Of`
// sections. What MSON has no words for (`pattern`, `maximum`, `format`, …) is named as a loss.
import KagamiContract
import KagamiJSON

struct MSONWriter {
    /// A data structure's name by its schema, so a schema equal to one is written as its name
    /// (the readers inline references: equal values are where they were).
    private let names: [JSONValue: String]
    /// What could not be written, as (JSON pointer within the schema of the schema that has it, keyword).
    private(set) var losses: [(pointer: String, keyword: String)] = []

    init(structures: [DataStructure]) {
        var names: [JSONValue: String] = [:]
        for structure in structures {
            guard let schema = structure.schema, names[schema] == nil else { continue }
            names[schema] = structure.name
        }
        self.names = names
    }

    /// Keywords MSON says, one way or another.
    private static let written: Set<String> = [
        "type", "properties", "required", "items", "enum", "const", "description", "example", "examples", "default",
        "additionalProperties", "allOf", "oneOf", "anyOf", "$ref", "$defs", "definitions", "$schema",
    ]

    /// `## Name (type)`, its description (the schema's, else the structure's) and its members;
    /// `name` itself is not looked up as a reference.
    mutating func namedType(_ name: String, schema: JSONValue, description: String = "") -> String {
        let (type, members) = typeAndMembers(schema, pointer: "", topLevel: true)
        var text = "## \(Self.escaped(name)) (\(type))\n"
        let description = schema["description"]?.stringValue ?? description
        if !description.isEmpty { text += "\n" + description.trimmedNewlines + "\n" }
        if !members.isEmpty { text += "\n" + members.joined(separator: "\n") + "\n" }
        return text
    }

    /// The type expression for an attributes section: a named type or an array of one; nil
    /// when the schema is none of these.
    func typeReference(_ schema: JSONValue) -> String? {
        if let name = names[schema] { return Self.escaped(name) }
        if schema["type"]?.stringValue == "array", let items = schema["items"], let name = names[items] {
            return "array[\(Self.escaped(name))]"
        }
        return nil
    }

    /// The type of a schema in a signature's parentheses, and the lines of its members (each
    /// indented under the element it belongs to).
    private mutating func typeAndMembers(_ schema: JSONValue, pointer: String, topLevel: Bool = false) -> (String, [String]) {
        guard case .object(let members) = schema else {
            if schema == .bool(false) { losses.append((pointer, "false")) }
            return ("string", [])
        }
        if !topLevel, let name = names[schema] { return (Self.escaped(name), []) }
        if let reference = members["$ref"]?.stringValue {
            let name = reference.split(separator: "/").last.map(String.init) ?? reference
            return (Self.escaped(name.removingPercentEncodingSimple), [])
        }
        for key in members.keys where !Self.written.contains(key) && !key.hasPrefix("x-") {
            losses.append((pointer, key))
        }
        var types = members["type"]?.stringValue.map { [$0] } ?? members["type"]?.arrayValue?.compactMap(\.stringValue) ?? []
        var nullable = types.contains("null")
        types.removeAll { $0 == "null" }
        var attributes: [String] = []
        var lines: [String] = []
        // A one-member enumeration is a `const` in the OpenAPI reader's form.
        if let values = members["enum"]?.arrayValue ?? members["const"].map({ [$0] }) {
            // Each member typed by itself: `enum[string]` would let any string through.
            // A named type lists its members as its own items; an element under `+ Members`.
            attributes.append("enum")
            if !topLevel { lines.append("+ Members") }
            let indent = topLevel ? "" : "    "
            for value in values where value != .null {
                let type = Self.jsonType(value)
                lines.append(indent + (type == "string" ? "+ `\(Self.plain(value))`" : "+ \(Self.plain(value)) (\(type))"))
            }
            if values.contains(.null) { attributes.append("nullable") }
        } else if let key = members["oneOf"] != nil ? "oneOf" : members["anyOf"] != nil ? "anyOf" : nil,
                  let alternatives = members[key]?.arrayValue {
            if !alternatives.isEmpty, members["allOf"] == nil, types.allSatisfy({ $0 == "object" }), alternatives.allSatisfy(isPropertySet) {
                // Objects each with their own properties: MSON's One Of, beside any shared ones.
                attributes.append("object")
                lines += objectMembers(schema, pointer: pointer)
                lines += oneOfSection(alternatives, pointer: pointer + "/" + key)
            } else {
                // A choice of other types: an enumeration of them (drafter writes it as anyOf).
                attributes.append("enum")
                for (index, alternative) in alternatives.enumerated() {
                    // `{"type": "null"}` among them: the enumeration is nullable.
                    if alternative == ["type": "null"] {
                        nullable = true
                        continue
                    }
                    noteDescription(of: alternative, at: pointer + "/\(key)/\(index)")
                    let (type, nested) = typeAndMembers(alternative, pointer: pointer + "/\(key)/\(index)")
                    // A primitive member is a value; a typed sample (`*text* (string)`) is any
                    // value of its type.
                    let sample = nested.isEmpty ? Self.typeSamples[type] : nil
                    lines.append("+ \(sample.map { "*\($0)* " } ?? "")(\(type))")
                    lines += nested.map { "    " + $0 }
                }
            }
        } else if let parts = members["allOf"]?.arrayValue {
            // A named base and the members added to it: MSON's inheritance; parts that are
            // alternatives of property sets: its One Of sections.
            var base = "object"
            lines += objectMembers(schema, pointer: pointer)
            for (index, part) in parts.enumerated() {
                let partPointer = pointer + "/allOf/\(index)"
                if let name = names[part] ?? part["$ref"]?.stringValue?.split(separator: "/").last.map(String.init), base == "object" {
                    base = Self.escaped(name)
                } else if let choice = Self.choice(part), choice.alternatives.allSatisfy(isPropertySet) {
                    lines += oneOfSection(choice.alternatives, pointer: partPointer + "/" + choice.key)
                } else {
                    // Only an object's members join the base.
                    for key in part.objectValue?.keys ?? [] where !["type", "properties", "required", "additionalProperties"].contains(key) && !key.hasPrefix("x-") {
                        losses.append((partPointer, key))
                    }
                    lines += objectMembers(part, pointer: partPointer)
                }
            }
            attributes.append(base)
        } else {
            let type = types.first ?? (members["properties"] != nil ? "object" : members["items"] != nil ? "array" : "string")
            if types.count > 1 { losses.append((pointer, "type")) }
            switch type {
            case "object":
                attributes.append("object")
                // `fixed-type`: no properties beyond those listed.
                if members["additionalProperties"] == .bool(false) { attributes.append("fixed-type") }
                lines += objectMembers(schema, pointer: pointer)
            case "array":
                if let items = members["items"] {
                    noteDescription(of: items, at: pointer + "/items")
                    let (itemType, nested) = typeAndMembers(items, pointer: pointer + "/items")
                    // `fixed-type`: the items are of that type (else it only shows samples).
                    if nested.isEmpty {
                        attributes.append("array[\(itemType)], fixed-type")
                    } else {
                        attributes.append("array, fixed-type")
                        lines.append("+ (\(itemType))")
                        lines += nested.map { "    " + $0 }
                    }
                } else {
                    attributes.append("array")
                }
            default:
                // MSON has no integer: a whole number is a `number` there.
                if type == "integer" { losses.append((pointer, "type: integer (written as number)")) }
                attributes.append(Self.mson(type))
            }
        }
        if nullable { attributes.append("nullable") }
        if let value = members["default"], value.isScalar {
            lines.append("+ Default: `\(Self.plain(value))`")
        }
        return (attributes.joined(separator: ", "), lines)
    }

    /// `+ name: sample (type, required) - description` for each property.
    private mutating func objectMembers(_ schema: JSONValue, pointer: String) -> [String] {
        var lines: [String] = []
        let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        if let additional = schema["additionalProperties"], additional != .bool(false) {
            losses.append((pointer, "additionalProperties"))
        }
        for (name, property) in schema["properties"]?.objectValue ?? [:] {
            let propertyPointer = pointer + "/properties/" + Self.pointerToken(name)
            let (type, nested) = typeAndMembers(property, pointer: propertyPointer)
            var line = "+ " + Self.escaped(name)
            let sample = property["examples"]?.arrayValue?.first ?? property["example"]
            if let sample, sample.isScalar { line += ": `\(Self.plain(sample))`" }
            line += " (\(type), \(required.contains(name) ? "required" : "optional"))"
            if let description = property["description"]?.stringValue, !description.isEmpty, names[property] == nil {
                line += " - " + Self.oneLine(description)
            }
            lines.append(line)
            lines += nested.map { "    " + $0 }
        }
        return lines
    }

    /// A description where MSON has no place for one (an array's items, an alternative, an
    /// `allOf` part) is named as lost; a named type's is written with the type.
    private mutating func noteDescription(of schema: JSONValue, at pointer: String) {
        guard names[schema] == nil, let text = schema["description"]?.stringValue, !text.isEmpty else { return }
        losses.append((pointer, "description"))
    }

    /// `{"oneOf": […]}` or `{"anyOf": […]}` and nothing else (an `allOf` part MSON's One Of
    /// reads back as).
    private static func choice(_ part: JSONValue) -> (key: String, alternatives: [JSONValue])? {
        guard let members = part.objectValue, members.count == 1, let key = members.keys.first,
              key == "oneOf" || key == "anyOf", let alternatives = members[key]?.arrayValue, !alternatives.isEmpty else { return nil }
        return (key, alternatives)
    }

    /// An alternative a One Of can hold as one of its options: a named object type (an
    /// `Include`), or an object's properties (with `required` only among them) and its own
    /// nested alternatives, nothing else.
    private func isPropertySet(_ schema: JSONValue) -> Bool {
        guard let members = schema.objectValue else { return false }
        if members["$ref"] != nil { return true }
        if names[schema] != nil { return schema["type"] == "object" || schema["properties"] != nil }
        if let type = members["type"], type != "object" { return false }
        let properties = Set(members["properties"]?.objectValue?.keys.map { $0 } ?? [])
        guard let required = (members["required"] ?? []).arrayValue, required.allSatisfy({ $0.stringValue.map(properties.contains) == true }) else { return false }
        for (key, value) in members {
            switch key {
            case "type", "properties", "required", "description": continue
            case "allOf":
                guard let parts = value.arrayValue, parts.allSatisfy({ part in Self.choice(part)?.alternatives.allSatisfy(isPropertySet) == true }) else { return false }
            default:
                if !key.hasPrefix("x-") { return false }
            }
        }
        return true
    }

    /// `+ One Of` and its options: a named type's `Include`, a lone property, or a
    /// `Properties` group.
    private mutating func oneOfSection(_ alternatives: [JSONValue], pointer: String) -> [String] {
        var lines = ["+ One Of"]
        for (index, alternative) in alternatives.enumerated() {
            let optionPointer = pointer + "/\(index)"
            if let name = names[alternative] ?? alternative["$ref"]?.stringValue?.split(separator: "/").last.map({ String($0).removingPercentEncodingSimple }) {
                lines.append("    + Include \(Self.escaped(name))")
                continue
            }
            noteDescription(of: alternative, at: optionPointer)
            var option = objectMembers(alternative, pointer: optionPointer)
            for (partIndex, part) in (alternative["allOf"]?.arrayValue ?? []).enumerated() {
                guard let choice = Self.choice(part) else { continue }
                option += oneOfSection(choice.alternatives, pointer: optionPointer + "/allOf/\(partIndex)/" + choice.key)
            }
            // A lone property is an option by itself; several (or none) are a `Properties` group.
            let lone = option.count >= 1 && option.dropFirst().allSatisfy { $0.hasPrefix("    ") } && !option[0].hasPrefix("+ One Of")
            if lone {
                lines += option.map { "    " + $0 }
            } else {
                lines.append("    + Properties")
                lines += option.map { "        " + $0 }
            }
        }
        return lines
    }

    /// Samples that stand for any value of a primitive type in an enumeration.
    private static let typeSamples = ["string": "text", "number": "0", "boolean": "true"]

    private static func jsonType(_ value: JSONValue) -> String {
        switch value {
        case .bool: "boolean"
        case .integer, .number: "number"
        case .object: "object"
        case .array: "array"
        default: "string"
        }
    }

    /// MSON has no `integer`.
    private static func mson(_ type: String) -> String {
        ["boolean", "string", "number", "array", "object"].contains(type) ? type : type == "integer" ? "number" : "string"
    }

    private static func plain(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return value.serialized()
    }

    /// A name with MSON's reserved characters is written in backticks.
    static func escaped(_ name: String) -> String {
        name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == " " } && !name.isEmpty
            ? name : "`\(name)`"
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    private static func pointerToken(_ key: String) -> String {
        var token = ""
        for character in key {
            token += character == "~" ? "~0" : character == "/" ? "~1" : String(character)
        }
        return token
    }
}

extension JSONValue {
    fileprivate var isScalar: Bool {
        switch self {
        case .object, .array, .null: false
        default: true
        }
    }
}

extension String {
    /// `%7B` → `{` in a reference's last token (component names have no `%` of their own).
    fileprivate var removingPercentEncodingSimple: String {
        var bytes: [UInt8] = []
        var utf8 = Array(self.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
