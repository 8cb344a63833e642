// Turns JSON Schema errors into violations with pointers, the keyword, and what was expected and
// found, shortened for one line of a report.
import Foundation
import KagamiContentCoding
import KagamiContract
import KagamiFlow
import KagamiJSON
import KagamiJSONSchema

enum SchemaFinding {
    /// Valid when any of the documented schemas accepts the body; otherwise the first one's errors.
    static func bestOf(
        _ schemas: [(schema: JSONSchema, payload: MessagePayload)], body: JSONValue,
        operation: ContractViolation.Operation, side: ContractViolation.Side
    ) -> [ContractViolation] {
        var first: (errors: [JSONSchemaValidationError], payload: MessagePayload)?
        for (schema, payload) in schemas {
            let result = schema.validate(body)
            if result.isValid { return [] }
            if first == nil { first = (result.errors, payload) }
        }
        guard let first else { return [] }
        return first.errors.map { error in
            violation(
                error, schema: first.payload.schema, schemaPointer: first.payload.schemaPointer, instance: body, kind: .schema,
                operation: operation, side: side, location: .body)
        }
    }

    static func violation(
        _ error: JSONSchemaValidationError, schema: JSONValue?, schemaPointer: String?, instance: JSONValue,
        kind: ContractViolation.Kind, operation: ContractViolation.Operation, side: ContractViolation.Side,
        location: ContractViolation.Location
    ) -> ContractViolation {
        let value = JSONPointer.tokens(error.instanceLocation).flatMap { JSONPointer.resolve($0, in: instance) }
        let keywordTokens = JSONPointer.tokens(error.keywordLocation)
        let keywordValue = schema.flatMap { schema in keywordTokens.flatMap { JSONPointer.resolve($0, in: schema) } }
        // The schema object holding the keyword, as the UI shows it beside the offending value.
        let excerpt = schema.flatMap { schema in keywordTokens.flatMap { JSONPointer.resolve($0.dropLast(), in: schema) } }
        // A keyword's text value (`"integer"`, a pattern) reads better unquoted.
        var expected = keywordValue.map { $0.stringValue.map { Shortened.text($0) } ?? Shortened.json($0) }
        var actual = value.map(Shortened.json)
        switch error.keyword {
        case "required":
            // The names the object lacks, not the whole list.
            let present = Set(value?.objectValue?.keys.map { $0 } ?? [])
            let missing = keywordValue?.arrayValue?.compactMap(\.stringValue).filter { !present.contains($0) } ?? []
            if !missing.isEmpty {
                expected = Shortened.text("properties " + missing.map { "\"\($0)\"" }.joined(separator: ", "))
                actual = "absent"
            }
        case "type":
            actual = value.map { Shortened.text("\($0.typeName) \($0.serialized())") }
        case "additionalProperties", "unevaluatedProperties":
            if keywordValue == .bool(false) { expected = "no other properties" }
        default:
            break
        }
        return ContractViolation(
            kind: kind, operation: operation, side: side, location: location,
            instancePointer: error.instanceLocation, schemaPointer: (schemaPointer ?? "") + error.keywordLocation,
            keyword: error.keyword.isEmpty ? nil : error.keyword, expected: expected, actual: actual,
            schemaExcerpt: excerpt.map { Shortened.text($0.serialized(), limit: 400) }, message: error.message)
    }
}

/// Values cut to fit one line of a report.
enum Shortened {
    static let limit = 80

    static func text(_ text: String, limit: Int = Shortened.limit) -> String {
        guard text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }

    static func json(_ value: JSONValue) -> String {
        text(value.serialized())
    }
}

extension ContractViolation {
    static func notChecked(operation: Operation, side: Side, size: Int) -> ContractViolation {
        ContractViolation(
            kind: .notChecked, severity: .info, operation: operation, side: side, location: .body,
            message: "not checked: the body (\(size) bytes) is larger than the capture limit, so only its first part was kept")
    }

    static func notChecked(operation: Operation, side: Side, reason: String) -> ContractViolation {
        ContractViolation(kind: .notChecked, severity: .info, operation: operation, side: side, location: .body, message: "not checked: \(reason)")
    }

    static func notJSON(_ data: Data, contentEncoding: String?, operation: Operation, side: Side) -> ContractViolation {
        let reason: String
        do {
            _ = try JSONValue(parsing: String(decoding: data, as: UTF8.self))
            reason = "the body is not JSON"
        } catch {
            reason = "the body is not valid JSON: \(error)"
        }
        return ContractViolation(
            kind: .notJSON, operation: operation, side: side, location: .body, instancePointer: "",
            expected: "JSON", actual: Shortened.text(String(decoding: data.prefix(200), as: UTF8.self)), message: reason)
    }

    /// `query.limit`, `header.Content-Type`, `body/items/0`: where, in one word.
    public var place: String {
        if let name { return "\(location.rawValue).\(name)" }
        if location == .body { return "body" + (instancePointer ?? "") }
        return location.rawValue
    }
}

/// A message body as JSON: decoded from its Content-Encoding first.
enum MessageBody {
    enum Reading {
        case json(JSONValue)
        /// Not JSON; the bytes after decoding.
        case notJSON(Data)
        case undecodable(String)
    }

    static func read(_ body: FlowBody, headers: HeaderFields) -> Reading {
        let data: Data
        do {
            data = try ContentCoding.decode(body.data, contentEncoding: headers["Content-Encoding"])
        } catch {
            return .undecodable(error.description)
        }
        guard let value = try? JSONValue(parsing: String(decoding: data, as: UTF8.self)) else { return .notJSON(data) }
        return .json(value)
    }
}
