import Foundation
import KagamiJSON
import KagamiJSONSchema

/// One tool an MCP client can call: the JSON Schema its arguments must meet (checked before it
/// runs, so a call outside it is refused naming the field), the shape of what it answers, and
/// the work. Tools that use a running proxy (`needsAllowWrite`) are served only with `--allow-write`.
public struct KagamiTool: Sendable {
    public var name: String
    public var title: String
    public var summary: String
    /// The arguments' JSON Schema (an object; no member it doesn't name).
    public var input: JSONValue
    /// The answer's JSON Schema (always an object).
    public var output: JSONValue
    public var needsAllowWrite: Bool
    public var run: @Sendable (ToolArguments) async throws -> JSONValue

    public init(
        name: String, title: String, summary: String, input: JSONValue, output: JSONValue, needsAllowWrite: Bool = false,
        run: @escaping @Sendable (ToolArguments) async throws -> JSONValue
    ) {
        self.name = name
        self.title = title
        self.summary = summary
        self.input = input
        self.output = output
        self.needsAllowWrite = needsAllowWrite
        self.run = run
    }
}

/// A tool's arguments once they met its schema: typed reads, and the checks a schema can't
/// make (an exchange id is a UUID) failing with the field's name.
public struct ToolArguments: Sendable {
    public let values: JSONObject

    public init(_ values: JSONObject) {
        self.values = values
    }

    public func string(_ name: String) -> String? { values[name]?.stringValue }
    public func int(_ name: String) -> Int? { values[name]?.intValue }
    public func bool(_ name: String) -> Bool? { values[name]?.boolValue }
    public func object(_ name: String) -> JSONObject? { values[name]?.objectValue }

    /// The exchange id in `name` (required by the schema, so present).
    public func exchangeID(_ name: String = "id") throws(ToolArgumentError) -> UUID {
        let text = string(name) ?? ""
        guard let id = UUID(uuidString: text) else {
            throw ToolArgumentError(field: name, message: "\(text.isEmpty ? "nothing" : "\"\(text)\"") is not an exchange id (a UUID, as search_exchanges gives it)")
        }
        return id
    }

    /// The page position in `name`: a `next` an earlier answer gave.
    public func cursor(_ name: String = "cursor") throws(ToolArgumentError) -> Int64? {
        guard let text = string(name) else { return nil }
        guard let position = Int64(text) else {
            throw ToolArgumentError(field: name, message: "\"\(text)\" is not a cursor (give the next of an earlier answer)")
        }
        return position
    }
}

/// Arguments a tool can't take: which field, and why. Reaches the client as an MCP error
/// (invalid params), never as an empty success.
public struct ToolArgumentError: Error, Sendable, CustomStringConvertible {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { field.isEmpty ? message : "\(field): \(message)" }
}

/// What a tool could not do with valid arguments (no such exchange, the proxy refused a rule):
/// answered as a tool result marked as an error, for the model to read and act on.
public struct ToolFailure: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// The tools served, each input schema compiled once.
public struct ToolCatalog: Sendable {
    public let tools: [KagamiTool]
    private let schemas: [String: JSONSchema]

    public init(_ tools: [KagamiTool]) throws {
        self.tools = tools
        var schemas: [String: JSONSchema] = [:]
        for tool in tools {
            schemas[tool.name] = try JSONSchema(compiling: tool.input, options: .init(draft: .draft2020_12))
        }
        self.schemas = schemas
    }

    public func tool(named name: String) -> KagamiTool? {
        tools.first { $0.name == name }
    }

    /// The arguments checked against the tool's schema: the first problem, naming its field.
    public func check(_ arguments: JSONObject, for tool: KagamiTool) throws(ToolArgumentError) -> ToolArguments {
        guard let schema = schemas[tool.name] else { return ToolArguments(arguments) }
        let result = schema.validate(.object(arguments))
        guard let first = result.errors.first else { return ToolArguments(arguments) }
        throw ToolArgumentError(field: Self.field(first.instanceLocation), message: first.message)
    }

    /// `/edit/status` → `edit.status`; array items as `[n]`.
    static func field(_ pointer: String) -> String {
        guard let tokens = JSONPointer.tokens(pointer) else { return pointer }
        var field = ""
        for token in tokens {
            if let index = Int(token), String(index) == token, !field.isEmpty {
                field += "[\(index)]"
            } else {
                field += field.isEmpty ? token : ".\(token)"
            }
        }
        return field
    }

    /// Runs `name` with `arguments`: the answer, or a `ToolArgumentError` for arguments outside
    /// the schema or a tool that isn't served, or the tool's own error.
    public func call(_ name: String, arguments: JSONObject) async throws -> JSONValue {
        guard let tool = tool(named: name) else {
            throw ToolArgumentError(field: "name", message: "no tool named \(name) (tools/list names them\(Self.writeHint(name)))")
        }
        return try await tool.run(try check(arguments, for: tool))
    }

    private static func writeHint(_ name: String) -> String {
        WriteTools.names.contains(name) ? "; \(name) changes a running proxy and is served only with --allow-write" : ""
    }
}
