// A test's recordings compared by operation, so a suite can say "this change adds no network
// calls" or "no field the app reads went away".
import Foundation
@_exported import KagamiDiff
import KagamiStore

/// What changed between two recordings (a baseline and this run's `proxy.flows`, say), by
/// operation: the same findings as `kagami diff`. Throws `DiffInputError` when either is empty
/// or they have nothing in common, so an empty result always means "no change".
///
/// ```swift
/// let changes = try diff(baseline, proxy.flows)
/// #expect(changes.findings(.addedOperation).isEmpty, "new calls: \(changes.findings(.addedOperation).map(\.operation))")
/// ```
public func diff(_ before: [Flow], _ after: [Flow], options: DiffOptions = DiffOptions()) throws(DiffInputError) -> CaptureDiff {
    try CaptureDiff(before: before, after: after, options: options)
}

/// The same, with the baseline a session file (one `.sessionFile(path:)` or `kagami proxy
/// --session` recorded), read a page at a time.
public func diff(sessionFile path: String, _ after: [Flow], options: DiffOptions = DiffOptions()) async throws -> CaptureDiff {
    guard FileManager.default.fileExists(atPath: path) else { throw KagamiSetupError("no session file at \(path)") }
    guard SQLiteFlowStore.holdsSession(at: path) else { throw KagamiSetupError("\(path) is not a session file") }
    let store = try SQLiteFlowStore(path: path)
    var before = CaptureSummary(options: options)
    try await store.forEachFlow(includeBodies: true) { page in
        try await before.add(page) { try await store.messages(of: $0, offset: 0, limit: nil) }
    }
    var now = CaptureSummary(options: options)
    for flow in after { now.add(flow) }
    return try CaptureDiff(before: before, after: now)
}
