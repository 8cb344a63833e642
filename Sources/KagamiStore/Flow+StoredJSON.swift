import Foundation
import KagamiFlow
import KagamiJSON

// A flow's metadata column, written by hand: at tens of thousands of exchanges a second,
// `JSONEncoder` was the largest cost of keeping a session. The document is exactly what
// `JSONEncoder` (dates `.deferredToDate`) writes for `flow.withoutBodyBytes`, so `JSONDecoder`
// reads it back; SessionStoreTests holds the two to each other on a flow with every field set.
extension Flow {
    /// Everything about the flow except its body bytes, as JSON.
    public func storedJSON() -> Data {
        var json = JSONTextWriter(capacity: 2048)
        json.beginObject()
        json.key("id"); json.string(id.uuidString)
        json.key("mode"); json.string(mode.rawValue)
        if let clientAddress { json.key("clientAddress"); json.string(clientAddress) }
        if let serverAddress { json.key("serverAddress"); json.string(serverAddress) }
        json.key("request"); request.write(to: &json)
        if let response { json.key("response"); response.write(to: &json) }
        json.key("timings"); timings.write(to: &json)
        if let error {
            json.key("error")
            json.beginObject()
            json.key("kind"); json.string(error.kind.rawValue)
            json.key("message"); json.string(error.message)
            json.endObject()
        }
        if let tls { json.key("tls"); tls.write(to: &json) }
        json.key("violations")
        json.beginArray()
        for violation in violations { violation.write(to: &json) }
        json.endArray()
        json.key("appliedRules")
        json.beginArray()
        for rule in appliedRules {
            json.beginObject()
            json.key("name"); json.string(rule.name)
            json.key("description"); json.string(rule.description)
            json.endObject()
        }
        json.endArray()
        if let archiveFields {
            json.key("archiveFields")
            json.beginArray()
            for field in archiveFields {
                json.beginObject()
                json.key("path")
                json.beginArray()
                for name in field.path { json.string(name) }
                json.endArray()
                if let text = field.json { json.key("json"); json.string(text) }
                json.endObject()
            }
            json.endArray()
        }
        if let repeatOf { json.key("repeatOf"); json.string(repeatOf.uuidString) }
        if let streamID { json.key("streamID"); json.integer(streamID) }
        json.endObject()
        return Data(json.bytes)
    }
}

extension ContractViolation {
    fileprivate func write(to json: inout JSONTextWriter) {
        json.beginObject()
        json.key("kind"); json.string(kind.rawValue)
        json.key("severity"); json.string(severity.rawValue)
        if let operation {
            json.key("operation")
            json.beginObject()
            json.key("name"); json.string(operation.name)
            json.key("method"); json.string(operation.method)
            json.key("template"); json.string(operation.template)
            json.endObject()
        }
        json.key("side"); json.string(side.rawValue)
        json.key("location"); json.string(location.rawValue)
        let optionals: [(String, String?)] = [
            ("name", name), ("instancePointer", instancePointer), ("schemaPointer", schemaPointer),
            ("keyword", keyword), ("expected", expected), ("actual", actual), ("schemaExcerpt", schemaExcerpt),
        ]
        for (key, value) in optionals {
            if let value { json.key(key); json.string(value) }
        }
        json.key("message"); json.string(message)
        json.endObject()
    }
}

extension FlowRequest {
    fileprivate func write(to json: inout JSONTextWriter) {
        json.beginObject()
        json.key("method"); json.string(method)
        json.key("scheme"); json.string(scheme)
        json.key("host"); json.string(host)
        json.key("port"); json.integer(port)
        json.key("target"); json.string(target)
        json.key("version"); json.string(version)
        json.key("headers"); headers.write(to: &json)
        json.key("body"); body.writeWithoutBytes(to: &json)
        json.endObject()
    }
}

extension FlowResponse {
    fileprivate func write(to json: inout JSONTextWriter) {
        json.beginObject()
        json.key("status"); json.integer(status)
        json.key("reason"); json.string(reason)
        json.key("version"); json.string(version)
        json.key("headers"); headers.write(to: &json)
        json.key("body"); body.writeWithoutBytes(to: &json)
        if let trailers { json.key("trailers"); trailers.write(to: &json) }
        json.endObject()
    }
}

extension HeaderFields {
    fileprivate func write(to json: inout JSONTextWriter) {
        json.beginObject()
        json.key("fields")
        json.beginArray()
        for field in fields {
            json.beginObject()
            json.key("name"); json.string(field.name)
            json.key("value"); json.string(field.value)
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }
}

extension FlowBody {
    /// The bytes live in their own table; here only the size and whether they were cut.
    fileprivate func writeWithoutBytes(to json: inout JSONTextWriter) {
        json.beginObject()
        json.key("data"); json.string("")
        json.key("size"); json.integer(size)
        json.key("isTruncated"); json.bool(isTruncated)
        json.endObject()
    }
}

extension FlowTimings {
    fileprivate func write(to json: inout JSONTextWriter) {
        json.beginObject()
        json.key("start"); json.number(start.timeIntervalSinceReferenceDate)
        for (name, date) in [("connected", connected), ("requestSent", requestSent), ("firstByte", firstByte), ("end", end)] {
            if let date { json.key(name); json.number(date.timeIntervalSinceReferenceDate) }
        }
        for (name, interval) in [("blocked", blocked), ("dns", dns), ("ssl", ssl), ("heldAtRequest", heldAtRequest), ("heldAtResponse", heldAtResponse)] {
            if let interval { json.key(name); json.number(interval) }
        }
        json.endObject()
    }
}

extension TLSInfo {
    fileprivate func write(to json: inout JSONTextWriter) {
        json.beginObject()
        let texts = [("version", version), ("clientVersion", clientVersion), ("cipherSuite", cipherSuite), ("alpn", alpn),
                     ("serverName", serverName), ("certificateSubject", certificateSubject), ("certificateIssuer", certificateIssuer),
                     ("certificateFingerprintSHA256", certificateFingerprintSHA256)]
        for (name, text) in texts {
            if let text { json.key(name); json.string(text) }
        }
        json.key("upstreamVerificationDisabled"); json.bool(upstreamVerificationDisabled)
        json.endObject()
    }
}
