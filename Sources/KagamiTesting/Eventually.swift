/// Asks `probe` until it gives a value, at most `attempts` times with `interval` between: how
/// a test waits for something another task or process does. The attempts are a bound, so a
/// hang fails the test; the test asserts what arrived, never how long it took.
public func eventually<T>(
    attempts: Int = 500, every interval: Duration = .milliseconds(10), _ probe: () async throws -> T?
) async throws -> T? {
    for attempt in 0..<attempts {
        if let value = try await probe() { return value }
        if attempt + 1 < attempts { try await Task.sleep(for: interval) }
    }
    return nil
}

/// Asks `condition` until it holds, at most `attempts` times with `interval` between; whether
/// it came to hold.
@discardableResult
public func eventually(
    attempts: Int = 500, every interval: Duration = .milliseconds(10), _ condition: () async throws -> Bool
) async throws -> Bool {
    try await eventually(attempts: attempts, every: interval) { try await condition() ? true : nil } ?? false
}
