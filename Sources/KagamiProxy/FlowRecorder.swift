import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1

/// Builds one `Flow` from the parts of an exchange as they pass through the proxy, keeping
/// body bytes up to the capture limit and counting the rest. Bytes are copied once, into the
/// flow's bodies as they pass.
struct FlowRecorder {
    private(set) var flow: Flow
    private let captureLimit: Int

    init(mode: Flow.Mode, clientAddress: String?, target: ProxyTarget, head: HTTPRequestHead, captureLimit: Int) {
        let request = FlowRequest(
            method: head.method.rawValue,
            scheme: target.scheme,
            host: target.host,
            port: target.port,
            target: head.method == .CONNECT ? target.authority : target.path,
            version: head.version.description,
            headers: HeaderFields(head.headers)
        )
        flow = Flow(mode: mode, clientAddress: clientAddress, request: request, timings: FlowTimings(start: Date()))
        self.captureLimit = captureLimit
        Self.reserve(for: head.headers, in: &flow.request.body.data, limit: captureLimit)
    }

    /// The version the client spoke (the server may be spoken to in another).
    mutating func setVersion(_ version: HTTPVersion) {
        flow.request.version = version.description
    }

    /// The request as the rules changed it: destination, target, headers (body parts follow).
    mutating func setRequest(_ request: FlowRequest, headers: HTTPHeaders) {
        flow.request.method = request.method
        flow.request.scheme = request.scheme
        flow.request.host = request.host
        flow.request.port = request.port
        flow.request.target = request.target
        flow.request.headers = HeaderFields(headers)
        flow.request.body = FlowBody()
        Self.reserve(for: headers, in: &flow.request.body.data, limit: captureLimit)
    }

    /// A request `kagami repeat` sent again: stored as a repeat of that exchange.
    mutating func markRepeat(of id: UUID) {
        flow.repeatOf = id
    }

    /// The HTTP/2 stream the exchange is on.
    mutating func setStream(_ id: Int) {
        flow.streamID = id
    }

    /// The request with the body bytes kept so far.
    var requestSoFar: FlowRequest { flow.request }

    mutating func addRuleApplications(_ applications: [RuleApplication]) {
        flow.appliedRules += applications
    }

    mutating func setTLS(_ info: TLSInfo?) {
        if let info { flow.tls = info }
    }

    /// The server connection is ready; `tlsHandshake` when this exchange made it and it took a
    /// TLS handshake (HAR's `ssl`, within `connect`).
    mutating func connected(to address: String?, tlsHandshake: TimeAmount? = nil) {
        flow.serverAddress = address
        flow.timings.connected = Date()
        flow.timings.ssl = tlsHandshake.map { Double($0.nanoseconds) / 1e9 }
    }

    mutating func requestBodyPart(_ buffer: ByteBuffer) {
        flow.request.body.size += buffer.readableBytes
        Self.keep(buffer, in: &flow.request.body.data, limit: captureLimit, truncated: &flow.request.body.isTruncated)
    }

    mutating func requestSent() {
        if flow.timings.requestSent == nil { flow.timings.requestSent = Date() }
    }

    mutating func responseHead(_ head: HTTPResponseHead) {
        if flow.timings.firstByte == nil { flow.timings.firstByte = Date() }
        var response = FlowResponse(
            status: Int(head.status.code),
            reason: head.status.reasonPhrase,
            version: head.version.description,
            headers: HeaderFields(head.headers)
        )
        let code = head.status.code
        if flow.request.method != "HEAD", code >= 200, code != 204, code != 304 {
            Self.reserve(for: head.headers, in: &response.body.data, limit: captureLimit)
        }
        flow.response = response
    }

    mutating func responseBodyPart(_ buffer: ByteBuffer) {
        guard var response = flow.response else { return }
        // Taken out while it grows, so its bytes have one owner and grow in place.
        flow.response = nil
        response.body.size += buffer.readableBytes
        Self.keep(buffer, in: &response.body.data, limit: captureLimit, truncated: &response.body.isTruncated)
        flow.response = response
    }

    /// Fields that came after the response body.
    mutating func responseTrailers(_ trailers: HTTPHeaders) {
        guard flow.response != nil, !trailers.isEmpty else { return }
        flow.response?.trailers = HeaderFields(trailers)
    }

    /// A response Kagami made itself (an error page), recorded as what the client received.
    mutating func localResponse(status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer) {
        responseHead(HTTPResponseHead(version: .http1_1, status: status, headers: headers))
        responseBodyPart(body)
    }

    /// Counts relayed bytes without keeping them (tunnels).
    mutating func countTunnelBytes(up: Int, down: Int) {
        flow.request.body.size = up
        flow.response?.body.size = down
    }

    /// The flow so far, for an exchange that goes on (an upgraded connection): no end yet.
    var inProgress: Flow { flow }

    mutating func finish(error: FlowError?) -> Flow {
        flow.timings.end = Date()
        if flow.error == nil { flow.error = error }
        return flow
    }

    /// Room for a body of the announced length (up to what is kept, and at most
    /// `maximumReserved`: a length is only a promise), so it is not copied as it grows.
    private static func reserve(for headers: HTTPHeaders, in data: inout Data, limit: Int) {
        guard let text = headers.first(name: "content-length"), let length = Int(text), length > 0 else { return }
        data.reserveCapacity(min(length, limit, maximumReserved))
    }

    static let maximumReserved = 4 << 20

    private static func keep(_ buffer: ByteBuffer, in store: inout Data, limit: Int, truncated: inout Bool) {
        let count = min(max(0, limit - store.count), buffer.readableBytes)
        if count > 0 {
            buffer.withUnsafeReadableBytes { bytes in
                if let base = bytes.baseAddress { store.append(base.assumingMemoryBound(to: UInt8.self), count: count) }
            }
        }
        if count < buffer.readableBytes { truncated = true }
    }
}
