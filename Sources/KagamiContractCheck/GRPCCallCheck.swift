// A gRPC call checked against its method in a Protocol Buffers schema: the HTTP status and the
// call's status, and each message of both sides decoded as the method's type and validated
// against that type's JSON Schema (the fields' validation annotations).
import Foundation
import KagamiContract
import KagamiFlow
import KagamiGRPC
import KagamiJSON
import KagamiJSONSchema

enum GRPCCallCheck {
    /// What checking the call found, and the response messages that decoded (for coverage).
    struct Outcome {
        var violations: [ContractViolation] = []
        var responseMessages: [JSONValue] = []
    }

    static func check(_ flow: Flow, route: OperationRoute, schema: ProtobufSchema) -> Outcome {
        var outcome = Outcome()
        let operation = route.operation
        guard let response = flow.response else { return outcome }
        if response.status != 200 {
            outcome.violations.append(ContractViolation(
                kind: .undocumentedStatus, severity: .warning, operation: operation, side: .response, location: .status,
                expected: "200", actual: String(response.status),
                message: "a gRPC response has HTTP status 200 (the call's own status is in grpc-status); this one has \(response.status)"))
        }
        outcome.violations += statusViolations(response, operation: operation)
        guard let exchange = GRPCExchange(flow: flow, responseTrailers: response.trailers, schema: schema) else { return outcome }
        if flow.request.headers["content-type"]?.lowercased().contains("+json") ?? false {
            outcome.violations.append(.notChecked(operation: operation, side: .request, reason: "messages in JSON (application/grpc+json) are not read with the schema"))
            return outcome
        }
        let request = route.action.examples.first?.requests.first?.payload
        outcome.violations += violations(
            of: exchange.request, truncated: flow.request.body.isTruncated, type: exchange.method?.inputType, payload: request,
            schema: route.requestSchema(example: 0, index: 0), operation: operation, side: .request)
        if let side = exchange.response {
            let documented = route.responses.first
            outcome.violations += violations(
                of: side, truncated: response.body.isTruncated, type: exchange.method?.outputType, payload: documented?.response.payload, schema: documented?.schema,
                operation: operation, side: .response)
            outcome.responseMessages = side.messages.compactMap { message in
                if case .success(let typed)? = message.typed { typed.json } else { nil }
            }
        }
        return outcome
    }

    /// `grpc-status` in the trailers (or the headers of a trailers-only answer): present, and
    /// one of the codes 0–16.
    static func statusViolations(_ response: FlowResponse, operation: ContractViolation.Operation) -> [ContractViolation] {
        let source = response.trailers.flatMap { $0.contains("grpc-status") ? $0 : nil } ?? response.headers
        guard let raw = source["grpc-status"] else {
            return [ContractViolation(
                kind: .missing, operation: operation, side: .response, location: .header, name: "grpc-status",
                expected: "a grpc-status trailer", actual: "absent",
                message: "the call ended without a grpc-status trailer (nor a trailers-only grpc-status header), so the client can't tell how it ended")]
        }
        let text = raw.trimmingCharacters(in: .whitespaces)
        guard let code = Int(text), (0...16).contains(code) else {
            return [ContractViolation(
                kind: .undocumentedStatus, operation: operation, side: .response, location: .header, name: "grpc-status",
                expected: "0–16", actual: Shortened.text(text),
                message: "grpc-status \(Shortened.text(text)) is not one of the gRPC status codes 0–16")]
        }
        return []
    }

    /// Each message of one side read as `type`: the framing, messages that don't decode as the
    /// type, fields the type does not declare, and the decoded message against its schema.
    /// Instance pointers start with the message's index in its stream (`/0/items/1/name`).
    static func violations(
        of side: GRPCExchange.Side, truncated: Bool, type: String?, payload: MessagePayload?, schema: JSONSchema?,
        operation: ContractViolation.Operation, side direction: ContractViolation.Side
    ) -> [ContractViolation] {
        var found: [ContractViolation] = []
        for message in side.messages {
            let pointer = "/\(message.index)"
            if let note = message.note {
                found.append(.notChecked(operation: operation, side: direction, reason: "message \(message.index): \(note)"))
                continue
            }
            switch message.typed {
            case .failure(let failure)?:
                found.append(ContractViolation(
                    kind: .messageType, operation: operation, side: direction, location: .body, instancePointer: pointer,
                    expected: type.map { Shortened.text($0) }, actual: Shortened.text(GRPCExchange.Message.hex(message.payload.prefix(32))),
                    message: "message \(message.index) (\(message.length) bytes) does not decode as \(type ?? "its type") \(failure)"))
            case .success(let typed)?:
                for unknown in typed.unknownFields {
                    let path = unknown.path.isEmpty ? "" : "/" + unknown.path.replacingOccurrences(of: ".", with: "/")
                    found.append(ContractViolation(
                        kind: .schema, severity: .warning, operation: operation, side: direction, location: .body,
                        instancePointer: pointer + path, keyword: "unknown field",
                        expected: Shortened.text("fields of \(typed.type)"), actual: "field \(unknown.field.number) (\(unknown.field.value.wireTypeName))",
                        message: "field \(unknown.field.number) (\(unknown.field.value.wireTypeName)) is not a field of \(typed.type)\(unknown.path.isEmpty ? "" : " at \(unknown.path)"): a message of another type, or of a newer version of the schema"))
                }
                guard let schema else { continue }
                let result = schema.validate(typed.json)
                for error in result.errors {
                    var violation = SchemaFinding.violation(
                        error, schema: payload?.schema, schemaPointer: payload?.schemaPointer, instance: typed.json, kind: .schema,
                        operation: operation, side: direction, location: .body)
                    violation.instancePointer = pointer + (violation.instancePointer ?? "")
                    found.append(violation)
                }
            case nil:
                break
            }
        }
        if let problem = side.problem {
            guard !truncated else {
                found.append(.notChecked(operation: operation, side: direction, reason: "message \(side.messages.count) and those after it: \(problem)"))
                return found
            }
            found.append(ContractViolation(
                kind: .messageType, operation: operation, side: direction, location: .body,
                instancePointer: "/\(side.messages.count)", expected: "length-prefixed gRPC messages", actual: Shortened.text(problem),
                message: "the body is not whole gRPC framing: \(problem)"))
        }
        return found
    }
}
