import Foundation
import KagamiFlow
import KagamiJSON

/// HAR's consecutive phases (blocked, dns, connect, send, wait, receive; ssl inside connect),
/// in milliseconds, from and to the flow's points in time. Unknown phases before the
/// connection are -1; send, wait and receive are never -1 (HAR requires them), so the time of
/// a phase Kagami did not see goes to the next one it did, and `time` is their sum.
struct HARTimings {
    var blocked = -1.0, dns = -1.0, connect = -1.0, ssl = -1.0
    var send = 0.0, wait = 0.0, receive = 0.0
    /// Kagami's own: milliseconds held at breakpoints (written as `_heldAtRequest`, `_heldAtResponse`).
    var heldAtRequest: Double?, heldAtResponse: Double?

    init(blocked: Double, dns: Double, connect: Double, ssl: Double, send: Double, wait: Double, receive: Double) {
        (self.blocked, self.dns, self.connect, self.ssl) = (blocked, dns, connect, ssl)
        (self.send, self.wait, self.receive) = (send, wait, receive)
    }

    init(_ timings: FlowTimings) {
        var cursor = timings.start
        func phase(to point: Date?) -> Double? {
            guard let point else { return nil }
            defer { cursor = max(cursor, point) }
            return Self.milliseconds(point.timeIntervalSince(cursor))
        }
        // Time held at a request breakpoint comes before the connection: HAR's blocked (and
        // `_heldAtRequest` says how much of it was held). Time held at a response breakpoint
        // stays within receive, and `_heldAtResponse` says how much.
        let waited = (timings.blocked ?? 0) + (timings.heldAtRequest ?? 0)
        if timings.blocked != nil || timings.heldAtRequest != nil {
            self.blocked = Self.milliseconds(waited)
            cursor += waited
        }
        heldAtRequest = timings.heldAtRequest.map(Self.milliseconds)
        heldAtResponse = timings.heldAtResponse.map(Self.milliseconds)
        if let dns = timings.dns {
            self.dns = Self.milliseconds(dns)
            cursor += dns
        }
        connect = phase(to: timings.connected) ?? -1
        ssl = timings.ssl.map(Self.milliseconds) ?? -1
        send = phase(to: timings.requestSent) ?? 0
        wait = phase(to: timings.firstByte) ?? 0
        receive = phase(to: timings.end) ?? 0
    }

    /// The flow's points in time, each phase starting where the known ones before it ended.
    func flowTimings(start: Date) -> FlowTimings {
        var timings = FlowTimings(start: start)
        var cursor = start
        func point(after milliseconds: Double) -> Date? {
            guard milliseconds >= 0 else { return nil }
            cursor += milliseconds / 1000
            return cursor
        }
        if blocked >= 0 { timings.blocked = blocked / 1000; cursor += blocked / 1000 }
        if dns >= 0 { timings.dns = dns / 1000; cursor += dns / 1000 }
        timings.connected = point(after: connect)
        if ssl >= 0 { timings.ssl = ssl / 1000 }
        timings.requestSent = point(after: send)
        timings.firstByte = point(after: wait)
        timings.end = point(after: receive)
        return timings
    }

    /// `time`: every known phase but ssl, which connect already holds.
    var total: Double {
        Self.rounded([blocked, dns, connect, send, wait, receive].filter { $0 >= 0 }.reduce(0, +))
    }

    func write(to json: inout JSONTextWriter) {
        json.beginObject()
        for (name, value) in [("blocked", blocked), ("dns", dns), ("connect", connect), ("ssl", ssl), ("send", send), ("wait", wait), ("receive", receive)] {
            json.key(name); Self.write(value, to: &json)
        }
        if let heldAtRequest { json.key("_heldAtRequest"); Self.write(heldAtRequest, to: &json) }
        if let heldAtResponse { json.key("_heldAtResponse"); Self.write(heldAtResponse, to: &json) }
        json.endObject()
    }

    /// Whole milliseconds (and -1) written as integers, as browsers write them.
    static func write(_ milliseconds: Double, to json: inout JSONTextWriter) {
        if milliseconds == milliseconds.rounded(), abs(milliseconds) < 1e15 {
            json.integer(Int(milliseconds))
        } else {
            json.number(milliseconds)
        }
    }

    /// Milliseconds to the microsecond: more than any clock here measures, and stable when a
    /// value goes through a `Date` and back.
    static func milliseconds(_ seconds: TimeInterval) -> Double {
        rounded(max(0, seconds * 1000))
    }

    static func rounded(_ milliseconds: Double) -> Double {
        (milliseconds * 1000).rounded() / 1000
    }
}
