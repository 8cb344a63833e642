import Foundation
import KagamiFlow
import KagamiGRPC
import Testing

@Suite struct GRPCExchangeTests {
    func frame(_ payload: [UInt8], compressed: Bool = false) -> [UInt8] {
        let length = payload.count
        return [compressed ? 1 : 0, UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + payload
    }

    func flow(request: [UInt8], response: [UInt8], headers: HeaderFields = HeaderFields([("content-type", "application/grpc")])) -> Flow {
        var flow = Flow(
            mode: .reverse,
            request: FlowRequest(method: "POST", scheme: "http", host: "127.0.0.1", port: 50051, target: "/notes.v1.Notes/Get", version: "HTTP/2.0",
                                 headers: HeaderFields([("content-type", "application/grpc"), ("te", "trailers")]), body: FlowBody(data: Data(request))),
            timings: FlowTimings(start: Date(timeIntervalSince1970: 1_700_000_000))
        )
        flow.response = FlowResponse(status: 200, version: "HTTP/2.0", headers: headers, body: FlowBody(data: Data(response)))
        return flow
    }

    @Test func messagesOfBothSidesAndTheStatusFromTrailers() throws {
        let request = frame([0x08, 0x07])
        let response = frame([0x0A, 0x02, 0x68, 0x69]) + frame([]) + frame([0x10, 0x01])
        let trailers = HeaderFields([("grpc-status", "5"), ("grpc-message", "note%207%20is%20gone")])
        let exchange = try #require(GRPCExchange(flow: flow(request: request, response: response), responseTrailers: trailers))
        #expect(exchange.request.messages.count == 1)
        #expect(try exchange.request.messages[0].fields?.get() == [.init(number: 1, value: .varint(7))])
        let messages = try #require(exchange.response?.messages)
        #expect(messages.map(\.length) == [4, 0, 2])
        #expect(try messages[0].fields?.get() == [.init(number: 1, value: .text("hi"))])
        #expect(try messages[1].fields?.get() == [])
        #expect(exchange.response?.problem == nil)
        #expect(exchange.status == GRPCExchange.Status(code: 5, name: "NOT_FOUND", message: "note 7 is gone"))
    }

    @Test func aTrailersOnlyAnswerHasItsStatusInTheHeaders() throws {
        let headers = HeaderFields([("content-type", "application/grpc"), ("grpc-status", "12"), ("grpc-message", "no such method")])
        let exchange = try #require(GRPCExchange(flow: flow(request: frame([]), response: [], headers: headers)))
        #expect(exchange.response?.messages == [])
        #expect(exchange.status?.name == "UNIMPLEMENTED")
        #expect(exchange.status?.message == "no such method")
    }

    @Test func gzipMessagesAreInflatedAndUnknownCodingsSaidSo() throws {
        // gzip of the bytes 08 2a (field 1 = 42), written by Python's gzip.compress(mtime=0).
        let gzip: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xe3, 0xd0, 0x02, 0x00, 0x21, 0x51, 0xbb, 0x52, 0x02, 0x00, 0x00, 0x00]
        let side = GRPCExchange.side(FlowBody(data: Data(frame(gzip, compressed: true))), encoding: "gzip")
        #expect(side.messages.first?.compressed == true)
        #expect(try side.messages.first?.fields?.get() == [.init(number: 1, value: .varint(42))])
        let snappy = GRPCExchange.side(FlowBody(data: Data(frame([1, 2, 3], compressed: true))), encoding: "snappy")
        #expect(snappy.messages.first?.fields == nil)
        #expect(snappy.messages.first?.note == "compressed with grpc-encoding snappy, shown as it arrived")
    }

    @Test func framingProblemsNameTheByte() {
        let cut = GRPCExchange.side(FlowBody(data: Data(frame([0x08, 0x01]) + [0, 0, 0, 0, 9, 1, 2])), encoding: nil)
        #expect(cut.messages.count == 1)
        #expect(cut.problem == "message 1 at byte 7 declares 9 bytes, 2 follow")
        let short = GRPCExchange.side(FlowBody(data: Data([0, 0, 0])), encoding: nil)
        #expect(short.problem == "message 0 has a 3-byte prefix at byte 0; a prefix is 5 bytes")
        let flag = GRPCExchange.side(FlowBody(data: Data([7, 0, 0, 0, 0])), encoding: nil)
        #expect(flag.problem == "message 0 at byte 0 has compressed flag 7; only 0 and 1 exist")
        let truncated = GRPCExchange.side(FlowBody(data: Data(frame([0x08, 0x01])), size: 1_000, isTruncated: true), encoding: nil)
        #expect(truncated.problem == "the body was captured up to 7 of 1000 bytes")
    }

    /// A message over the decode cap is listed with its length and first bytes, not decoded,
    /// and the ones after it are read as usual; one cut by the capture limit is no framing problem.
    @Test func aMessageOverTheCapIsNotDecoded() throws {
        let huge = [UInt8](repeating: 0x61, count: GRPCExchange.decodeLimit + 1)
        let side = GRPCExchange.side(FlowBody(data: Data(frame(huge) + frame([0x08, 0x01]))), encoding: nil)
        #expect(side.problem == nil)
        #expect(side.messages.map(\.length) == [GRPCExchange.decodeLimit + 1, 2])
        let first = try #require(side.messages.first)
        #expect(first.note == "not decoded: 4194305 bytes, over the 4194304-byte cap")
        #expect(first.fields == nil && first.payload.count == 4_096)
        #expect(try side.messages[1].fields?.get() == [.init(number: 1, value: .varint(1))])

        let declared = 100 << 20
        let captured = Data([0, UInt8(declared >> 24 & 0xFF), UInt8(declared >> 16 & 0xFF), 0, 0] + [UInt8](repeating: 0x62, count: 10_000))
        let cut = GRPCExchange.side(FlowBody(data: captured, size: declared + 5, isTruncated: true), encoding: nil)
        #expect(cut.messages.map(\.length) == [declared])
        #expect(cut.messages.first?.note?.hasPrefix("not decoded: 104857600 bytes, over the") == true)
        #expect(cut.problem == "the body was captured up to 10005 of 104857605 bytes")
    }

    @Test func onlyGRPCContentTypesAreRead() {
        #expect(GRPCExchange.isGRPC(contentType: "application/grpc"))
        #expect(GRPCExchange.isGRPC(contentType: " Application/GRPC ; charset=x"))
        #expect(!GRPCExchange.isGRPC(contentType: ""))
        #expect(!GRPCExchange.isGRPC(contentType: ";"))
        #expect(GRPCExchange.isGRPC(contentType: "application/grpc+proto; charset=utf-8"))
        #expect(!GRPCExchange.isGRPC(contentType: "application/grpc-web"))
        #expect(!GRPCExchange.isGRPC(contentType: "application/json"))
        #expect(GRPCExchange(flow: flow(request: [], response: [], headers: HeaderFields()).withRequestType("application/json")) == nil)
    }
}

extension Flow {
    func withRequestType(_ type: String) -> Flow {
        var copy = self
        copy.request.headers = HeaderFields([("content-type", type)])
        return copy
    }
}
