import ArgumentParser

/// The `kagami` command: a debugging proxy and API mock server.
public struct Kagami: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "kagami",
        abstract: "HTTP(S) debugging proxy and API mock server.",
        version: "0.1.0",
        subcommands: [
            ProxyCommand.self,
            ServeCommand.self,
            FlowsCommand.self,
            ExportCommand.self,
            PushCommand.self,
            CACommand.self,
            ImportCommand.self,
            CurlRequestCommand.self,
            RepeatCommand.self,
            TemplateCommand.self,
            SchemaCommand.self,
            LintCommand.self,
            ValidateCommand.self,
            ContractCommand.self,
            MockCommand.self,
            DocsCommand.self,
            ConvertCommand.self,
            InferCommand.self,
            DiffCommand.self,
            MCPCommand.self,
            ScenarioCommand.self,
        ]
    )

    public init() {}
}
