import Foundation
import KagamiFlow
import NIOCore
import NIOHTTP1
import Testing

import KagamiControl
@testable import KagamiProxy

/// The recorder keeps body bytes up to the capture limit, counts the rest, and takes a
/// Content-Length as a hint only.
@Suite struct FlowRecorderTests {
    private func recorder(method: HTTPMethod = .POST, limit: Int, requestLength: String? = nil) -> FlowRecorder {
        let target = ProxyTarget(scheme: "http", host: "api.local", port: 80, path: "/upload")
        var headers: HTTPHeaders = ["Host": "api.local"]
        if let requestLength { headers.add(name: "Content-Length", value: requestLength) }
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: "/upload", headers: headers)
        return FlowRecorder(mode: .reverse, clientAddress: nil, target: target, head: head, captureLimit: limit)
    }

    private func bytes(_ count: Int, from start: Int = 0) -> [UInt8] {
        (start..<start + count).map { UInt8(truncatingIfNeeded: $0 * 7) }
    }

    @Test func keepsBodiesUpToTheLimitAndCountsTheRest() {
        var recorder = recorder(limit: 10, requestLength: "12")
        recorder.requestBodyPart(ByteBuffer(bytes: bytes(6)))
        #expect(recorder.requestSoFar.body.data == Data(bytes(6)))
        recorder.requestBodyPart(ByteBuffer(bytes: bytes(6, from: 6)))
        recorder.responseHead(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "9"]))
        for start in stride(from: 0, to: 9, by: 3) { recorder.responseBodyPart(ByteBuffer(bytes: bytes(3, from: start))) }
        let flow = recorder.finish(error: nil)
        #expect(flow.request.body.data == Data(bytes(10)))
        #expect(flow.request.body.size == 12)
        #expect(flow.request.body.isTruncated)
        #expect(flow.response?.body.data == Data(bytes(9)))
        #expect(flow.response?.body.size == 9)
        #expect(flow.response?.body.isTruncated == false)
    }

    /// A server may announce more than it sends (or a HEAD's length): the flow holds what came.
    @Test(arguments: ["1073741824", "-5", "12abc", "9223372036854775807"])
    func aContentLengthIsOnlyAHint(length: String) {
        var recorder = recorder(method: .GET, limit: 10 << 20, requestLength: length)
        recorder.responseHead(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": length]))
        recorder.responseBodyPart(ByteBuffer(bytes: bytes(100)))
        let flow = recorder.finish(error: nil)
        #expect(flow.response?.body.data == Data(bytes(100)))
        #expect(flow.request.body.data.isEmpty)
    }

    /// A copy of the flow taken mid-exchange (a hook, a breakpoint) keeps what it saw.
    @Test func aCopyTakenMidwayKeepsItsBytes() {
        var recorder = recorder(limit: 1 << 20)
        recorder.responseHead(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "8"]))
        recorder.responseBodyPart(ByteBuffer(bytes: bytes(4)))
        let midway = recorder.inProgress
        recorder.responseBodyPart(ByteBuffer(bytes: bytes(4, from: 4)))
        #expect(midway.response?.body.data == Data(bytes(4)))
        #expect(recorder.finish(error: nil).response?.body.data == Data(bytes(8)))
    }

    /// A large part read into a buffer it fills is kept in that buffer, not copied: the relay
    /// writing the same buffer on and the flow share its bytes. Small parts are copied into one.
    @Test func largePartsAreSharedAndSmallOnesGathered() throws {
        var recorder = recorder(limit: 1 << 20)
        recorder.responseHead(HTTPResponseHead(version: .http1_1, status: .ok, headers: [:]))
        var expected: [UInt8] = []
        var shared: [ByteBuffer] = []
        for index in 0..<4 {
            var buffer = ByteBufferAllocator().buffer(capacity: 64 << 10)
            let part = bytes(64 << 10, from: index)
            buffer.writeBytes(part)
            expected += part
            shared.append(buffer)
            recorder.responseBodyPart(buffer)
        }
        for index in 0..<50 {
            let part = bytes(100, from: index)
            expected += part
            recorder.responseBodyPart(ByteBuffer(bytes: part))
        }
        // A large part that fills a tenth of its buffer is copied: it would hold the whole buffer.
        var roomy = ByteBufferAllocator().buffer(capacity: 1 << 20)
        let tail = bytes(20 << 10, from: 99)
        roomy.writeBytes(tail)
        expected += tail
        recorder.responseBodyPart(roomy)

        let body = try #require(recorder.finish(error: nil).response?.body)
        #expect(body.data == Data(expected))
        #expect(body.keptCount == expected.count && body.size == expected.count)
        #expect(body.parts.count == 5, "four shared parts, then the small ones and the roomy one gathered")
        for (part, buffer) in zip(body.parts, shared) {
            part.withUnsafeBytes { kept in
                buffer.withUnsafeReadableBytes { read in #expect(kept.baseAddress == read.baseAddress, "shared, not copied") }
            }
        }
    }

    /// The limit cuts a shared part too.
    @Test func theLimitCutsASharedPart() throws {
        var recorder = recorder(limit: 100_000)
        recorder.responseHead(HTTPResponseHead(version: .http1_1, status: .ok, headers: [:]))
        for index in 0..<2 {
            var buffer = ByteBufferAllocator().buffer(capacity: 64 << 10)
            buffer.writeBytes(bytes(64 << 10, from: index))
            recorder.responseBodyPart(buffer)
        }
        let body = try #require(recorder.finish(error: nil).response?.body)
        #expect(body.data == Data(bytes(64 << 10) + bytes(100_000 - (64 << 10), from: 1)))
        #expect(body.size == 128 << 10 && body.isTruncated)
    }
}
