import NIOHTTP1
import Testing
@testable import KagamiProxy

/// How a server's response head is framed for the client, without a connection.
@Suite struct ResponseFramingTests {
    func head(_ fields: [(String, String)], status: HTTPResponseStatus = .ok) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields))
    }

    let get = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")

    @Test func aKeptAliveLengthFramedAnswerKeepsBothConnections() {
        let framing = ResponseFraming(relaying: head([("Content-Length", "12")]), to: get, clientVersion: .http1_1)
        #expect(framing.serverKeepsAlive && framing.clientKeepsAlive)
        #expect(framing.declaredLength == 12)
        #expect(framing.head == head([("Content-Length", "12")]))
        #expect(framing.trailersOnlyStatus == nil)
    }

    @Test func aServerThatClosesClosesTheClientsConnectionToo() {
        let framing = ResponseFraming(relaying: head([("Connection", "close")]), to: get, clientVersion: .http1_1)
        #expect(!framing.serverKeepsAlive && !framing.clientKeepsAlive)
        #expect(framing.declaredLength == nil)
    }

    @Test func anHTTP10ClientGetsChunkedBodiesRawAndTheCloseEndsThem() {
        let chunked = ResponseFraming(relaying: head([("Transfer-Encoding", "chunked")]), to: get, clientVersion: HTTPVersion.http1_0)
        #expect(chunked.head.version == .http1_0)
        #expect(!chunked.head.headers.contains(name: "transfer-encoding"))
        #expect(chunked.serverKeepsAlive && !chunked.clientKeepsAlive)
        let framed = ResponseFraming(relaying: head([("Content-Length", "3")]), to: get, clientVersion: HTTPVersion.http1_0)
        #expect(framed.clientKeepsAlive)
        #expect(framed.declaredLength == 3)
    }

    /// No body follows these, whatever Content-Length says.
    @Test func bodilessAnswersDeclareNoLength() {
        let lengthy = [("Content-Length", "10")]
        #expect(ResponseFraming(relaying: head(lengthy), to: HTTPRequestHead(version: .http1_1, method: .HEAD, uri: "/"), clientVersion: .http1_1).declaredLength == nil)
        for status in [HTTPResponseStatus.noContent, .notModified, .continue] {
            #expect(ResponseFraming(relaying: head(lengthy, status: status), to: get, clientVersion: .http1_1).declaredLength == nil)
        }
        #expect(ResponseFraming(relaying: head([("Content-Length", "10"), ("Transfer-Encoding", "chunked")]), to: get, clientVersion: .http1_1).declaredLength == nil)
    }

    @Test func anHTTP2ClientGetsNoTransferEncodingAndATrailersOnlyStatusTwice() {
        let grpc = head([("Content-Type", "application/grpc"), ("grpc-status", "5"), ("grpc-message", "not found"), ("Transfer-Encoding", "chunked")])
        let framing = ResponseFraming(relaying: grpc, to: get, clientVersion: HTTPVersion(major: 2, minor: 0))
        #expect(!framing.head.headers.contains(name: "transfer-encoding"))
        #expect(framing.trailersOnlyStatus == HTTPHeaders([("grpc-status", "5"), ("grpc-message", "not found")]))
        #expect(ResponseFraming(relaying: grpc, to: get, clientVersion: .http1_1).trailersOnlyStatus == nil)
    }
}
