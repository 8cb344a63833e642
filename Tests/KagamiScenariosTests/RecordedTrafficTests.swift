// Which recorded answer a request gets: matching, recorded order, the closest requests.
import Foundation
import KagamiContentCoding
import KagamiFlow
import KagamiScenarios
import KagamiTesting
import Testing

@Suite struct RecordedTrafficTests {
    static func body(_ reply: RecordedTraffic.Reply) -> String? {
        guard case .recorded(let answer) = reply else { return nil }
        return String(decoding: answer.body, as: UTF8.self)
    }

    static func get(_ traffic: inout RecordedTraffic, _ target: String, headers: [(String, String)] = []) -> RecordedTraffic.Reply {
        traffic.reply(method: "GET", target: target, headers: HeaderFields(headers), body: [])
    }

    @Test func aRecordedHostNamedByTheRequestAnswersFromItsOwnExchanges() throws {
        var traffic = try RecordedTraffic(flows: [
            FlowFixtures.api("/config", host: "api.example.com", response: #"{"api":1}"#),
            FlowFixtures.api("/config", host: "cdn.example.com", response: #"{"cdn":1}"#),
            FlowFixtures.api("/assets", host: "cdn.example.com", response: #"{"assets":[]}"#),
        ], source: "s.sqlite")
        let get = { (traffic: inout RecordedTraffic, target: String, host: String?) in
            Self.body(traffic.reply(method: "GET", target: target, headers: HeaderFields(), body: [], host: host))
        }
        #expect(get(&traffic, "/config", "CDN.example.com") == #"{"cdn":1}"#)
        #expect(get(&traffic, "/config", "api.example.com") == #"{"api":1}"#)
        // The mock's own address is no recorded host: the first recorded host with the call answers.
        #expect(get(&traffic, "/config", "127.0.0.1") == #"{"api":1}"#)
        #expect(get(&traffic, "/assets", "127.0.0.1") == #"{"assets":[]}"#)
        #expect(get(&traffic, "/assets", "api.example.com") == nil)
        #expect(traffic.reply(method: "GET", target: "/confi", headers: HeaderFields(), body: [], host: nil) == .unmatched(closest: ["GET /config", "GET /assets"]))
    }

    @Test func repeatedCallsAnswerInRecordedOrderThenRepeatTheLast() throws {
        var traffic = try RecordedTraffic(flows: [
            FlowFixtures.api("/feed?page=1&size=2", response: #"{"items":[1]}"#),
            FlowFixtures.api("/profile", response: #"{"name":"Ada"}"#),
            FlowFixtures.api("/feed?page=1&size=2", response: #"{"items":[1,2]}"#),
            FlowFixtures.api("/feed?page=1&size=2", response: #"{"items":[1,2,3]}"#),
        ], source: "s.sqlite")
        #expect(traffic.exchangeCount == 4)
        // The query's pairs in another order, and percent-encoded, are the same call.
        #expect(Self.body(Self.get(&traffic, "/feed?size=2&page=1")) == #"{"items":[1]}"#)
        #expect(Self.body(Self.get(&traffic, "/feed?page=%31&size=2")) == #"{"items":[1,2]}"#)
        #expect(Self.body(Self.get(&traffic, "/profile")) == #"{"name":"Ada"}"#)
        #expect(Self.body(Self.get(&traffic, "/feed?page=1&size=2")) == #"{"items":[1,2,3]}"#)
        #expect(Self.body(Self.get(&traffic, "/feed?page=1&size=2")) == #"{"items":[1,2,3]}"#)
        // Another query is another call.
        #expect(Self.body(Self.get(&traffic, "/feed?page=2&size=2")) == nil)
    }

    @Test func proxyRecordedAbsoluteTargetsMatchOriginFormRequests() throws {
        var traffic = try RecordedTraffic(flows: [FlowFixtures.api("http://api.example.com/users/1?x=1", response: "{}")], source: "s")
        #expect(Self.body(Self.get(&traffic, "/users/1?x=1")) == "{}")
    }

    @Test func headersAndBodyMatchOnlyWhenAsked() throws {
        let flows = [
            FlowFixtures.api("/orders", method: "POST", request: #"{"sku":"A-1","quantity":2}"#, response: #"{"id":1}"#, requestHeaders: [("Accept-Language", "de")]),
            FlowFixtures.api("/orders", method: "POST", request: #"{"sku":"B-2","quantity":1}"#, response: #"{"id":2}"#, requestHeaders: [("Accept-Language", "en")]),
        ]
        var loose = try RecordedTraffic(flows: flows, source: "s")
        #expect(Self.body(loose.reply(method: "post", target: "/orders", headers: HeaderFields(), body: Array("nothing".utf8))) == #"{"id":1}"#)

        var strict = try RecordedTraffic(flows: flows, matching: RecordedMatching(headers: ["accept-language"], body: true), source: "s")
        // The same JSON with its keys in another order and other spacing.
        let reordered = Array(#"{ "quantity": 1, "sku": "B-2" }"#.utf8)
        #expect(Self.body(strict.reply(method: "POST", target: "/orders", headers: HeaderFields([("Accept-Language", "en")]), body: reordered)) == #"{"id":2}"#)
        #expect(Self.body(strict.reply(method: "POST", target: "/orders", headers: HeaderFields([("Accept-Language", "de")]), body: reordered)) == nil)
        #expect(Self.body(strict.reply(method: "POST", target: "/orders", headers: HeaderFields([("Accept-Language", "en")]), body: Array(#"{"sku":"B-2","quantity":3}"#.utf8))) == nil)
    }

    @Test func unmatchedRequestNamesTheClosestRecordedRequests() throws {
        var traffic = try RecordedTraffic(flows: [
            FlowFixtures.api("/health", response: "ok"),
            FlowFixtures.api("/users/1/orders?status=open", response: "[]"),
            FlowFixtures.api("/users/1", response: "{}"),
            FlowFixtures.api("/users/1", method: "DELETE", status: 204),
            FlowFixtures.api("/catalog", response: "[]"),
        ], source: "s")
        guard case .unmatched(let closest) = Self.get(&traffic, "/users/1/orders?status=closed") else {
            Issue.record("a request never recorded was answered")
            return
        }
        #expect(closest == ["GET /users/1/orders?status=open", "GET /users/1", "DELETE /users/1"])
    }

    @Test func framingOfTheRecordedConnectionIsLeftToTheAnsweringServer() throws {
        var traffic = try RecordedTraffic(flows: [
            FlowFixtures.api("/a", response: "[]", responseHeaders: [("Transfer-Encoding", "chunked"), ("Connection", "keep-alive"), ("Content-Length", "2"), ("ETag", "\"1\"")]),
        ], source: "s")
        guard case .recorded(let answer) = Self.get(&traffic, "/a") else { Issue.record("not answered"); return }
        #expect(answer.headers.map(\.name) == ["ETag", "Content-Type"])
    }

    @Test func bodyKeptEncodedKeepsItsContentEncodingAndADecodedOneLosesIt() throws {
        let json = Data(#"{"compressed":true}"#.utf8)
        let gzipped = try ContentCoding.encode(json, contentEncoding: "gzip")
        var encoded = FlowFixtures.api("/kept", responseHeaders: [("Content-Encoding", "gzip")])
        encoded.response?.body = FlowBody(data: gzipped)
        var decoded = FlowFixtures.api("/archived", responseHeaders: [("Content-Encoding", "gzip")])
        decoded.response?.body = FlowBody(data: json)
        var traffic = try RecordedTraffic(flows: [encoded, decoded], source: "s")
        guard case .recorded(let kept) = Self.get(&traffic, "/kept"), case .recorded(let archived) = Self.get(&traffic, "/archived") else {
            Issue.record("not answered")
            return
        }
        #expect(Data(kept.body) == gzipped && kept.headers.contains { $0.name == "Content-Encoding" })
        #expect(Data(archived.body) == json && !archived.headers.contains { $0.name == "Content-Encoding" })
    }

    @Test func recordingWithoutAnsweredExchangesIsRefusedByName() {
        // A server that never answered and a WebSocket handshake are nothing to answer with.
        #expect(throws: RecordedTrafficError.noExchanges(source: "empty.har")) {
            try RecordedTraffic(flows: [FlowFixtures.api("/slow", status: nil), FlowFixtures.webSocket()], source: "empty.har")
        }
        #expect(RecordedTrafficError.noExchanges(source: "empty.har").description.contains("empty.har"))
    }
}
