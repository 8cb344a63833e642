import Foundation
import KagamiFlow
import KagamiHAR
import KagamiScenarios
import KagamiStore

/// The recordings a scenario's `recorded` states answer from, read the same way by
/// `kagami proxy`, `kagami mock` and KagamiKit: an HTTP Archive (`.har`), else a session file.
public enum Recordings {
    /// A reader that says each archive entry it had to skip through `skipped`; an archive none
    /// of whose entries could be read is refused.
    public static func reader(skipped: @escaping @Sendable (String) -> Void = { _ in }) -> RecordingReader {
        { path in
            if path.lowercased().hasSuffix(".har") {
                return try HARImport.read(contentsOf: path) { skipped("\($0)") }.flows
            }
            if let refusal = SQLiteFlowStore.notASession(at: path) { throw refusal }
            let store = try SQLiteFlowStore(path: path)
            do {
                let flows = try await store.allFlows()
                await store.close()
                return flows
            } catch {
                await store.close()
                throw error
            }
        }
    }
}
