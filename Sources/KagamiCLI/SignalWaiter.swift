// Waiting for Ctrl-C or SIGTERM.
import Foundation

/// Suspends until SIGINT or SIGTERM.
enum SignalWaiter {
    static func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumed = SignalState(continuation)
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
                source.setEventHandler { resumed.resume() }
                source.resume()
                resumed.keep(source)
            }
        }
    }

    private final class SignalState: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<Void, Never>?
        private var sources: [any DispatchSourceSignal] = []

        init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

        func keep(_ source: any DispatchSourceSignal) {
            lock.withLock { sources.append(source) }
        }

        func resume() {
            let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                defer { self.continuation = nil }
                return self.continuation
            }
            continuation?.resume()
        }
    }
}
