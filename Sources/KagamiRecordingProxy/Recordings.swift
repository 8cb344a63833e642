import Foundation
import KagamiFlow
import KagamiHAR
import KagamiScenarios
import KagamiStore

/// The recordings a scenario's `recorded` states answer from, read the same way by
/// `kagami proxy`, `kagami mock` and KagamiKit: an HTTP Archive (`.har`), else a session file.
public enum Recordings {
    public struct Unreadable: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// A reader that says each archive entry it had to skip through `skipped`; an archive none
    /// of whose entries could be read is refused.
    public static func reader(skipped: @escaping @Sendable (String) -> Void = { _ in }) -> RecordingReader {
        { path in
            if path.lowercased().hasSuffix(".har") {
                let data: Data
                do {
                    data = try Data(contentsOf: URL(fileURLWithPath: path))
                } catch {
                    throw Unreadable(description: "cannot read \(path): \(error.localizedDescription)")
                }
                let result: HARImport.Result
                do {
                    result = try HARImport.read(from: data, file: path)
                } catch {
                    throw Unreadable(description: "\(error)")
                }
                for entry in result.skipped { skipped("\(entry)") }
                if result.flows.isEmpty, !result.skipped.isEmpty {
                    throw Unreadable(description: "no entry of \(path) could be read")
                }
                return result.flows
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
