import KagamiRules
import NIOCore
import NIOEmbedded
import Testing
@testable import KagamiProxy

/// The throttling handler on a server connection, on an embedded channel whose clock moves only
/// when the test moves it: chunks arrive at their exact instants, reads stop while too much
/// waits, a close from the server waits behind the bytes before it.
@Suite struct ThrottleHandlerTests {
    /// What reaches the handlers after the link, in order.
    final class EventLog: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var events: [String] = []
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { events.append("bytes \(unwrapInboundIn(data).readableBytes)") }
        func channelInactive(context: ChannelHandlerContext) { events.append("inactive") }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { events.append("error: \(error)") }
        func channelWritabilityChanged(context: ChannelHandlerContext) { events.append("writability") }
    }

    struct Setup {
        let channel = EmbeddedChannel()
        let throttle = ThrottleHandler()
        let reads = ReadCounter()
        let log = EventLog()

        init(_ profile: ThrottleProfile) throws {
            try channel.pipeline.syncOperations.addHandlers([reads, throttle, log])
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
            throttle.shape(profile)
        }

        func advance(_ amount: TimeAmount) { channel.embeddedEventLoop.advanceTime(by: amount) }
        func bytes(_ count: Int) -> ByteBuffer { ByteBuffer(repeating: 0x62, count: count) }
    }

    final class Flag {
        var value = false
    }

    let oneMbps = ThrottleProfile(name: "1 Mbps", downloadKbps: 1000, uploadKbps: 1000)

    @Test func responseBytesArriveInMTUChunksAtTheirInstants() throws {
        let setup = try Setup(oneMbps)
        try setup.channel.writeInbound(setup.bytes(3000))
        #expect(setup.log.events.isEmpty)
        setup.advance(.microseconds(11_999))
        #expect(setup.log.events.isEmpty)
        setup.advance(.microseconds(1))
        #expect(setup.log.events == ["bytes 1500"])
        setup.advance(.milliseconds(12))
        #expect(setup.log.events == ["bytes 1500", "bytes 1500"])
    }

    @Test func readsFromTheServerStopWhileTooMuchWaits() throws {
        let setup = try Setup(oneMbps)
        setup.channel.read()
        let before = setup.reads.reads
        #expect(before >= 1)
        try setup.channel.writeInbound(setup.bytes(70_000))
        setup.channel.read()
        #expect(setup.reads.reads == before)
        // 70,000 bytes at 125,000 bytes/s: below 16 KiB waiting after about 430 ms.
        setup.advance(.milliseconds(420))
        #expect(setup.reads.reads == before)
        setup.advance(.milliseconds(20))
        #expect(setup.reads.reads == before + 1)
        setup.advance(.seconds(1))
        #expect(setup.log.events.count == 47)
    }

    @Test func aCloseFromTheServerWaitsForTheBytesBeforeIt() throws {
        let setup = try Setup(oneMbps)
        try setup.channel.writeInbound(setup.bytes(3000))
        setup.channel.pipeline.fireChannelInactive()
        setup.advance(.milliseconds(12))
        #expect(setup.log.events == ["bytes 1500"])
        setup.advance(.milliseconds(12))
        #expect(setup.log.events == ["bytes 1500", "bytes 1500", "inactive"])
    }

    @Test func requestWritesWaitTheirTurnAndTheLinkSaysWhenItIsFull() throws {
        let setup = try Setup(oneMbps)
        let written = setup.channel.write(setup.bytes(70_000))
        setup.channel.flush()
        #expect(!setup.throttle.isWritable)
        #expect(setup.log.events == ["writability"])
        #expect(try setup.channel.readOutbound(as: ByteBuffer.self) == nil)
        setup.advance(.milliseconds(12))
        #expect(try setup.channel.readOutbound(as: ByteBuffer.self)?.readableBytes == 1500)
        setup.advance(.milliseconds(430))
        #expect(setup.throttle.isWritable)
        #expect(setup.log.events == ["writability", "writability"])
        let done = Flag()
        written.assumeIsolated().whenSuccess { done.value = true }
        #expect(!done.value)
        // The write's promise completes with its last chunk: 560 ms.
        setup.advance(.milliseconds(118))
        #expect(done.value)
    }

    @Test func aLostMessageFailsTheConnection() throws {
        var lossy = oneMbps
        lossy.name = "100% Loss"
        lossy.reliability = 0
        let setup = try Setup(lossy)
        try setup.channel.writeInbound(setup.bytes(100))
        setup.advance(.milliseconds(1))
        setup.channel.embeddedEventLoop.run()
        #expect(setup.log.events == [#"error: throttling lost the response (profile "100% Loss", reliability 0%)"#, "inactive"])
        #expect(!setup.channel.isActive)
    }

    @Test func withoutAProfileBytesPassAtOnce() throws {
        let setup = try Setup(oneMbps)
        setup.throttle.shape(nil)
        let before = setup.reads.reads
        try setup.channel.writeInbound(setup.bytes(100_000))
        #expect(setup.log.events == ["bytes 100000"])
        setup.channel.read()
        setup.channel.read()
        #expect(setup.reads.reads == before + 2)
    }
}
