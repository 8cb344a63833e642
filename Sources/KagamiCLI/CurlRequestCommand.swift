import ArgumentParser
import KagamiCurl

/// `kagami curl --session FILE ID`: Copy cURL Request (or, for a gRPC call, Copy as grpcurl).
struct CurlRequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "curl",
        abstract: "Print a curl command that sends a recorded request again (method, URL, headers, body bytes), or a grpcurl command for a gRPC call."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case curl, grpcurl
    }

    @OptionGroup var source: SessionOptions

    @Option(help: "curl, or grpcurl for a gRPC call: its request as JSON read with --proto-path or --proto-descriptor.")
    var format: Format = .curl

    @OptionGroup var grpc: GRPCSchemaOptions

    @Argument(help: "The exchange's id (from `kagami flows --ids`).")
    var id: String

    func validate() throws {
        _ = try source.requiredSession()
    }

    func run() async throws {
        let reading = try await source.openForReading()
        let flow = try await reading.flow(id)
        try await reading.close()
        switch format {
        case .curl:
            print(CurlCommand(flow.request).shellCommand)
        case .grpcurl:
            do {
                print(try GRPCurlCommand(flow, schema: try grpc.schema(), sources: grpc.sources).shellCommand)
            } catch let failure as GRPCurlCommand.Failure {
                throw ValidationError(failure.description)
            }
        }
    }
}
