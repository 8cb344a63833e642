import ArgumentParser

/// The `kagami` command: a debugging proxy and API mock server.
@available(macOS 10.15, macCatalyst 13, iOS 13, tvOS 13, watchOS 6, *)
public struct Kagami: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "kagami",
        abstract: "HTTP(S) debugging proxy and API mock server.",
        version: "0.1.0",
        subcommands: [
            LintCommand.self,
            ContractCommand.self,
        ]
    )

    public init() {}

    /// Runs the chosen subcommand. `Kagami.main()` from top-level code resolves to the
    /// synchronous entry point, which refuses asynchronous roots; this one awaits `run()`.
    public static func launch() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
