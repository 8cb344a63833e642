import ArgumentParser
import KagamiStore

/// What is replaced by a marker before a flow is written to a shared store (`proxy --store`,
/// `push`): credentials by default.
struct RedactionOptions: ParsableArguments {
    @Option(name: .customLong("redact-header"), help: ArgumentHelp(
        "With --store: replace this header's values by a marker before anything is written to the shared store; repeatable. Default: Authorization, Proxy-Authorization, Cookie, Set-Cookie.",
        valueName: "name"))
    var redactHeaders: [String] = []

    @Flag(help: "With --store: write values as they are (no redaction).")
    var noRedaction = false

    var redaction: HeaderRedaction {
        noRedaction ? HeaderRedaction.none : HeaderRedaction(names: redactHeaders.isEmpty ? HeaderRedaction.defaultNames : redactHeaders)
    }
}
