import ArgumentParser
import Foundation

/// The `kagami` command: a debugging proxy and API mock server.
public struct Kagami: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "kagami",
        abstract: "HTTP(S) debugging proxy and API mock server.",
        version: "0.1.0",
        subcommands: [
            SchemaCommand.self,
        ]
    )

    public init() {}

    /// Top-level `await Kagami.main()` resolves to a synchronous `main()`, and ParsableCommand's
    /// own refuses an async root command; this one runs the command line on the main queue.
    public static func main() {
        Task { @MainActor in
            await runCommandLine()
            Foundation.exit(0)
        }
        dispatchMain()
    }

    private static func runCommandLine() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
