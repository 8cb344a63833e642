// The shapes the admin API gives flows in: a row for lists and live events, the whole flow
// (without body bytes) for the inspector.
import Foundation
import KagamiContractCheck
import KagamiFlow
import KagamiGRPC
import KagamiJSON

extension Flow {
    /// One row of the Sequence view.
    public var summaryJSON: JSONValue {
        var object: JSONObject = [:]
        object["id"] = .string(id.uuidString)
        object["time"] = .number(Self.milliseconds(timings.start))
        object["mode"] = .string(mode.rawValue)
        object["method"] = .string(request.method)
        object["scheme"] = .string(request.scheme)
        object["version"] = .string(request.version)
        object["host"] = .string(request.host)
        object["port"] = .integer(request.port)
        object["path"] = .string(request.method == "CONNECT" ? request.target : request.path)
        object["query"] = request.query.map(JSONValue.string) ?? .null
        object["status"] = response.map { JSONValue.integer($0.status) } ?? .null
        object["type"] = contentType.map(JSONValue.string) ?? .null
        object["requestSize"] = .integer(request.body.size)
        object["responseSize"] = response.map { JSONValue.integer($0.body.size) } ?? .null
        object["duration"] = duration.map { JSONValue.number(($0 * 1000).rounded()) } ?? .null
        if !appliedRules.isEmpty { object["rules"] = .array(ruleNames.map(JSONValue.string)) }
        object["error"] = error.map { JSONValue.string($0.message) } ?? .null
        object["tls"] = .bool(tls != nil || request.scheme == "https")
        // A tunnel's bytes were encrypted (tls) and, relayed untouched, never decrypted here.
        if request.method == "CONNECT" { object["decrypted"] = .bool(mode != .tunnel) }
        // Disagreements only: a body the check could not read is shown in the inspector, not as a badge.
        let disagreements = violations.filter(\.isDisagreement)
        if !disagreements.isEmpty {
            object["violations"] = .integer(disagreements.count)
            object["contract"] = .string(disagreements.contains { $0.severity == .error } ? "error" : "warning")
        }
        if let repeatOf { object["repeatOf"] = .string(repeatOf.uuidString) }
        if GRPCExchange.isGRPC(contentType: request.headers["content-type"]) {
            object["grpc"] = .bool(true)
            // A failed call is an HTTP 200 whose grpc-status says otherwise: the list shows both.
            if let response, let status = GRPCExchange.status(trailers: response.trailers, headers: response.headers) {
                object["grpcStatus"] = ["code": .integer(status.code), "name": .string(status.name)]
            }
        }
        return .object(object)
    }

    /// Everything the inspector shows, body bytes excepted (they load on demand).
    public var detailJSON: JSONValue {
        guard case .object(var object) = summaryJSON else { return summaryJSON }
        object["url"] = .string(request.url)
        if let streamID { object["streamId"] = .integer(streamID) }
        object["clientAddress"] = clientAddress.map(JSONValue.string) ?? .null
        object["serverAddress"] = serverAddress.map(JSONValue.string) ?? .null
        object["request"] = [
            "method": .string(request.method),
            "target": .string(request.target),
            "version": .string(request.version),
            "headers": Self.headersJSON(request.headers),
            "body": Self.bodyJSON(request.body, headers: request.headers),
        ]
        object["response"] = response.map { response -> JSONValue in
            [
                "status": .integer(response.status),
                "reason": .string(response.reason),
                "version": .string(response.version),
                "headers": Self.headersJSON(response.headers),
                "body": Self.bodyJSON(response.body, headers: response.headers),
                "trailers": response.trailers.map(Self.headersJSON) ?? .null,
            ]
        } ?? .null
        object["grpc"] = .bool(GRPCExchange.isGRPC(contentType: request.headers["content-type"]))
        object["timings"] = [
            "start": .number(Self.milliseconds(timings.start)),
            "connected": timings.connected.map { JSONValue.number(Self.milliseconds($0)) } ?? .null,
            "requestSent": timings.requestSent.map { JSONValue.number(Self.milliseconds($0)) } ?? .null,
            "firstByte": timings.firstByte.map { JSONValue.number(Self.milliseconds($0)) } ?? .null,
            "end": timings.end.map { JSONValue.number(Self.milliseconds($0)) } ?? .null,
            // Durations in milliseconds: time waiting at breakpoints, not network time.
            "heldAtRequest": timings.heldAtRequest.map { JSONValue.number(($0 * 1000).rounded()) } ?? .null,
            "heldAtResponse": timings.heldAtResponse.map { JSONValue.number(($0 * 1000).rounded()) } ?? .null,
        ]
        object["error"] = error.map { error -> JSONValue in ["kind": .string(error.kind.rawValue), "message": .string(error.message)] } ?? .null
        object["tls"] = tls.map { tls -> JSONValue in
            var info: JSONObject = ["upstreamVerificationDisabled": .bool(tls.upstreamVerificationDisabled)]
            let fields: [(String, String?)] = [
                ("version", tls.version), ("clientVersion", tls.clientVersion), ("cipherSuite", tls.cipherSuite),
                ("alpn", tls.alpn), ("serverName", tls.serverName), ("certificateSubject", tls.certificateSubject),
                ("certificateIssuer", tls.certificateIssuer), ("certificateFingerprintSHA256", tls.certificateFingerprintSHA256),
            ]
            for (name, value) in fields { info[name] = value.map(JSONValue.string) ?? .null }
            return .object(info)
        } ?? .null
        object["violations"] = .array(violations.map { $0.json() })
        object["appliedRules"] = .array(appliedRules.map { rule -> JSONValue in ["name": .string(rule.name), "description": .string(rule.description)] })
        return .object(object)
    }

    /// The rules that acted on this exchange, each once, in the order they first acted.
    var ruleNames: [String] {
        var seen = Set<String>()
        return appliedRules.map(\.name).filter { seen.insert($0).inserted }
    }

    /// The response's media type without parameters (`application/json`), else the request's.
    var contentType: String? {
        let header = response?.headers["Content-Type"] ?? (response == nil ? request.headers["Content-Type"] : nil)
        return header.flatMap(Self.mediaType)
    }

    static func mediaType(_ header: String) -> String? {
        let type = header.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased()
        return type?.isEmpty == false ? type : nil
    }

    static func milliseconds(_ date: Date) -> Double {
        (date.timeIntervalSince1970 * 1000).rounded()
    }

    static func headersJSON(_ headers: HeaderFields) -> JSONValue {
        .array(headers.map { field -> JSONValue in [.string(field.name), .string(field.value)] })
    }

    static func bodyJSON(_ body: FlowBody, headers: HeaderFields) -> JSONValue {
        [
            "size": .integer(body.size),
            "stored": .integer(body.keptCount),
            "truncated": .bool(body.isTruncated),
            "contentType": headers["Content-Type"].map(JSONValue.string) ?? .null,
            "contentEncoding": headers["Content-Encoding"].map(JSONValue.string) ?? .null,
        ]
    }
}
