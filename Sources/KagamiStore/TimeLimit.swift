import Synchronization

/// Work raced against a time limit, for a store whose server may stop answering: what the work
/// gives (or throws) when it ends first, nil when the time is up first. The work is not waited
/// for after that (a query on a lost connection doesn't always end); its caller decides whether
/// to cancel it or to close what it waits on.
public enum TimeLimit {
    public static func outcome<Value: Sendable>(of work: Task<Value, any Error>, within limit: Duration) async throws -> Value? {
        let first = FirstOutcome<Value>()
        return try await withCheckedThrowingContinuation { continuation in
            first.set(continuation)
            let timer = Task {
                try? await Task.sleep(for: limit)
                first.resume(with: .success(nil))
            }
            Task {
                do {
                    first.resume(with: .success(try await work.value))
                } catch {
                    first.resume(with: .failure(error))
                }
                timer.cancel()
            }
        }
    }
}

/// The first of two racers to finish resumes the continuation; the other is ignored.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value?, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<Value?, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(with result: Result<Value?, any Error>) {
        let waiting = continuation.withLock { state -> CheckedContinuation<Value?, any Error>? in
            defer { state = nil }
            return state
        }
        waiting?.resume(with: result)
    }
}
