import ArgumentParser
import KagamiCurl

/// `kagami curl --session FILE ID`: Copy cURL Request.
struct CurlRequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "curl",
        abstract: "Print a curl command that sends a recorded request again (method, URL, headers, body bytes)."
    )

    @OptionGroup var source: SessionOptions

    @Argument(help: "The exchange's id (from `kagami flows --ids`).")
    var id: String

    func validate() throws {
        _ = try source.requiredSession()
    }

    func run() async throws {
        let reading = try await source.openForReading()
        let flow = try await reading.flow(id)
        try await reading.close()
        print(CurlCommand(flow.request).shellCommand)
    }
}
