// The shapes the admin API gives flows in: a row for lists and live events, the whole flow
// (without body bytes) for the inspector.
import Foundation
import KagamiFlow
import KagamiJSON

extension Flow {
    /// One row of the Sequence view.
    var summaryJSON: JSONValue {
        var object: JSONObject = [
            "id": .string(id.uuidString),
            "time": .number(Self.milliseconds(timings.start)),
            "mode": .string(mode.rawValue),
            "method": .string(request.method),
            "scheme": .string(request.scheme),
            "host": .string(request.host),
            "port": .integer(request.port),
            "path": .string(request.method == "CONNECT" ? request.target : request.path),
            "query": request.query.map(JSONValue.string) ?? .null,
            "status": response.map { .integer($0.status) } ?? .null,
            "type": contentType.map(JSONValue.string) ?? .null,
            "requestSize": .integer(request.body.size),
            "responseSize": response.map { .integer($0.body.size) } ?? .null,
            "duration": duration.map { .number(($0 * 1000).rounded() ) } ?? .null,
            "error": error.map { .string($0.message) } ?? .null,
            "tls": .bool(tls != nil || request.scheme == "https"),
        ]
        if !violations.isEmpty { object["violations"] = .integer(violations.count) }
        return .object(object)
    }

    /// Everything the inspector shows, body bytes excepted (they load on demand).
    var detailJSON: JSONValue {
        guard case .object(var object) = summaryJSON else { return summaryJSON }
        object["url"] = .string(request.url)
        object["clientAddress"] = clientAddress.map(JSONValue.string) ?? .null
        object["serverAddress"] = serverAddress.map(JSONValue.string) ?? .null
        object["request"] = [
            "method": .string(request.method),
            "target": .string(request.target),
            "version": .string(request.version),
            "headers": Self.headersJSON(request.headers),
            "body": Self.bodyJSON(request.body, headers: request.headers),
        ]
        object["response"] = response.map { response in
            [
                "status": .integer(response.status),
                "reason": .string(response.reason),
                "version": .string(response.version),
                "headers": Self.headersJSON(response.headers),
                "body": Self.bodyJSON(response.body, headers: response.headers),
            ]
        } ?? .null
        object["timings"] = [
            "start": .number(Self.milliseconds(timings.start)),
            "connected": timings.connected.map { .number(Self.milliseconds($0)) } ?? .null,
            "requestSent": timings.requestSent.map { .number(Self.milliseconds($0)) } ?? .null,
            "firstByte": timings.firstByte.map { .number(Self.milliseconds($0)) } ?? .null,
            "end": timings.end.map { .number(Self.milliseconds($0)) } ?? .null,
        ]
        object["error"] = error.map { ["kind": .string($0.kind.rawValue), "message": .string($0.message)] } ?? .null
        object["tls"] = tls.map { tls in
            var info: JSONObject = ["upstreamVerificationDisabled": .bool(tls.upstreamVerificationDisabled)]
            let fields: [(String, String?)] = [
                ("version", tls.version), ("clientVersion", tls.clientVersion), ("cipherSuite", tls.cipherSuite),
                ("alpn", tls.alpn), ("serverName", tls.serverName), ("certificateSubject", tls.certificateSubject),
                ("certificateIssuer", tls.certificateIssuer), ("certificateFingerprintSHA256", tls.certificateFingerprintSHA256),
            ]
            for (name, value) in fields { info[name] = value.map(JSONValue.string) ?? .null }
            return .object(info)
        } ?? .null
        object["violations"] = .array(violations.map { ["location": .string($0.location), "message": .string($0.message)] })
        return .object(object)
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
        .array(headers.map { [.string($0.name), .string($0.value)] })
    }

    static func bodyJSON(_ body: FlowBody, headers: HeaderFields) -> JSONValue {
        [
            "size": .integer(body.size),
            "stored": .integer(body.data.count),
            "truncated": .bool(body.isTruncated),
            "contentType": headers["Content-Type"].map(JSONValue.string) ?? .null,
            "contentEncoding": headers["Content-Encoding"].map(JSONValue.string) ?? .null,
        ]
    }
}
