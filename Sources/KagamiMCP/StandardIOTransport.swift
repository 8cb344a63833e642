// Standard input and output as an MCP transport, read and written blocking on threads of their
// own. The SDK's StdioTransport makes both descriptors non-blocking and sleeps 10 ms whenever one
// has nothing to read or no room to write: 5–10 ms more on every call, and 10 ms for every pipe-
// full (64 KiB) of a long answer.
import Foundation
import Logging
// Implementation only, as in KagamiMCPServer.swift.
@_implementationOnly import MCP

actor StandardIOTransport: Transport {
    let logger = Logger(label: "kagami.mcp.stdio", factory: { _ in SwiftLogNoOpLogHandler() })
    private let messages: AsyncThrowingStream<Data, any Error>
    private let incoming: AsyncThrowingStream<Data, any Error>.Continuation
    /// Answers are written one after the other, off the actor's threads.
    private let writing = DispatchQueue(label: "kagami.mcp.stdout")
    private var reading = false

    init() {
        (messages, incoming) = AsyncThrowingStream.makeStream()
    }

    /// Starts reading standard input: each line a message, until the client closes it.
    func connect() async throws {
        guard !reading else { return }
        reading = true
        let incoming = incoming
        let reader = Thread {
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending.append(contentsOf: buffer[..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = pending[pending.startIndex..<newline]
                    if !line.isEmpty { incoming.yield(Data(line)) }
                    pending = Data(pending[(newline + 1)...])
                }
            }
            incoming.finish()
        }
        reader.name = "kagami.mcp.stdin"
        reader.start()
    }

    func disconnect() async {
        incoming.finish()
    }

    /// Writes the message and its newline whole before the next one.
    func send(_ data: Data) async throws {
        var message = data
        message.append(UInt8(ascii: "\n"))
        let line = message
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            writing.async {
                let failure: Int32? = line.withUnsafeBytes { bytes in
                    guard let start = bytes.baseAddress else { return nil }
                    var offset = 0
                    while offset < bytes.count {
                        let written = write(STDOUT_FILENO, start + offset, bytes.count - offset)
                        if written < 0 {
                            if errno == EINTR { continue }
                            return errno
                        }
                        offset += written
                    }
                    return nil
                }
                if let failure {
                    done.resume(throwing: MCPError.transportError(POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)))
                } else {
                    done.resume()
                }
            }
        }
    }

    func receive() -> AsyncThrowingStream<Data, any Error> {
        messages
    }
}
