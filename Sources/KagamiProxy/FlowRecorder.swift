import KagamiControl
import Foundation
import KagamiFlow
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Builds one `Flow` from the parts of an exchange as they pass through the proxy, keeping
/// body bytes up to the capture limit and counting the rest. A large part is kept in the buffer
/// it was read into, shared with the relay rather than copied; small parts are copied together.
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
        Self.keep(buffer, in: &flow.request.body, limit: captureLimit)
    }

    /// The response head arrived from the server (kept whole before it goes on, for a hook).
    mutating func firstByteArrived() {
        if flow.timings.firstByte == nil { flow.timings.firstByte = Date() }
    }

    /// The exchange waited `seconds` at a breakpoint in `phase`: booked as held, not as network time.
    mutating func held(_ phase: HeldExchange.Phase, for seconds: TimeInterval) {
        switch phase {
        case .request: flow.timings.heldAtRequest = (flow.timings.heldAtRequest ?? 0) + seconds
        case .response: flow.timings.heldAtResponse = (flow.timings.heldAtResponse ?? 0) + seconds
        case .message: break
        }
    }

    mutating func requestSent() {
        if flow.timings.requestSent == nil { flow.timings.requestSent = Date() }
    }

    mutating func responseHead(_ head: HTTPResponseHead) {
        firstByteArrived()
        flow.response = FlowResponse(
            status: Int(head.status.code),
            reason: head.status.reasonPhrase,
            version: head.version.description,
            headers: HeaderFields(head.headers)
        )
    }

    mutating func responseBodyPart(_ buffer: ByteBuffer) {
        guard var response = flow.response else { return }
        // Taken out while it grows, so its parts have one owner and grow in place.
        flow.response = nil
        Self.keep(buffer, in: &response.body, limit: captureLimit)
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

    /// A part this large, filling at least half the buffer it was read into, is kept in that
    /// buffer; a smaller one is copied, so a few bytes never hold a whole read buffer.
    static let sharedPartSize = 16 << 10

    private static func keep(_ buffer: ByteBuffer, in body: inout FlowBody, limit: Int) {
        body.size += buffer.readableBytes
        let count = min(max(0, limit - body.keptCount), buffer.readableBytes)
        if count >= sharedPartSize, count * 2 >= buffer.storageCapacity,
            let part = buffer.getData(at: buffer.readerIndex, length: count, byteTransferStrategy: .noCopy)
        {
            body.append(part)
        } else if count > 0 {
            buffer.withUnsafeReadableBytes { body.append(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        }
        if count < buffer.readableBytes { body.isTruncated = true }
    }
}
