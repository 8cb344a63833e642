// Kagami's JSON values and the MCP SDK's, one into the other at the protocol's edge.
import Foundation
import KagamiJSON
@_implementationOnly import MCP  // see KagamiMCPServer.swift

extension JSONValue {
    /// The value as the SDK carries it (its objects keep no order; the text content does).
    var mcpValue: MCP.Value {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .integer(let value): .int(value)
        case .number(let value): .double(value)
        case .string(let value): .string(value)
        case .array(let items): .array(items.map(\.mcpValue))
        case .object(let members): .object(Dictionary(members.map { ($0.key, $0.value.mcpValue) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// A value an MCP client sent; members sorted by name, since the SDK kept no order.
    init(mcp value: MCP.Value) {
        switch value {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .integer(value)
        case .double(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .data(let mimeType, let data): self = .string("data:\(mimeType ?? "application/octet-stream");base64,\(data.base64EncodedString())")
        case .array(let items): self = .array(items.map { JSONValue(mcp: $0) })
        case .object(let members):
            var object: JSONObject = [:]
            for key in members.keys.sorted() {
                if let member = members[key] { object[key] = JSONValue(mcp: member) }
            }
            self = .object(object)
        }
    }
}
