import ArgumentParser
import Foundation
import KagamiCurl
import KagamiFlow
import KagamiStore

/// `kagami curl --session FILE ID`: Copy cURL Request.
struct CurlRequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "curl",
        abstract: "Print a curl command that sends a recorded request again (method, URL, headers, body bytes)."
    )

    @Option(help: "Session file.")
    var session: String

    @Argument(help: "The exchange's id (from `kagami flows --ids`).")
    var id: String

    func run() async throws {
        let store = try SessionFile.open(session)
        let flow = try await SessionFile.flow(id, in: store)
        print(CurlCommand(flow.request).shellCommand)
    }
}

extension SessionFile {
    /// The stored exchange with bodies, or an error naming the id that isn't there.
    static func flow(_ id: String, in store: SQLiteFlowStore) async throws -> Flow {
        guard let uuid = UUID(uuidString: id) else {
            throw ValidationError("\(id) is not an exchange id (expected a UUID, as `kagami flows --ids` prints)")
        }
        guard let flow = try await store.flow(id: uuid) else {
            throw ValidationError("no exchange \(id) in \(store.path)")
        }
        return flow
    }
}
