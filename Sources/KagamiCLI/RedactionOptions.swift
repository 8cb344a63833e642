import ArgumentParser
import KagamiRules
import KagamiStore

/// What is replaced by a marker before a flow is written to a shared store (`proxy --store`,
/// `push`): credentials by default, and what the options and the rules document's `redaction`
/// section add.
struct RedactionOptions: ParsableArguments {
    @Option(name: .customLong("redact-header"), help: ArgumentHelp(
        "With --store: replace this header's values by a marker before anything is written to the shared store; repeatable. Default: the rules document's redaction.headers, else Authorization, Proxy-Authorization, Cookie, Set-Cookie.",
        valueName: "name"))
    var redactHeaders: [String] = []

    @Option(name: .customLong("redact-query"), help: ArgumentHelp(
        "With --store: replace the values of this query parameter (and form field) by a marker; repeatable, added to the rules document's redaction.query.",
        valueName: "name"))
    var redactQuery: [String] = []

    @Option(name: .customLong("redact-json-field"), help: ArgumentHelp(
        "With --store: replace this field of JSON bodies and WebSocket text messages by a marker: a member name at any depth, or a JSON pointer (/user/password); repeatable, added to the rules document's redaction.jsonFields.",
        valueName: "name|pointer"))
    var redactJSONFields: [String] = []

    @Flag(help: "With --store: write values as they are (no redaction at all).")
    var noRedaction = false

    func validate() throws {
        _ = try redaction(rules: nil)
    }

    /// The options over the rules document's section.
    func redaction(rules: RedactionSettings?) throws -> FlowRedaction {
        if noRedaction { return .none }
        if redactHeaders.contains(where: \.isEmpty) || redactQuery.contains(where: \.isEmpty) {
            throw ValidationError("--redact-header and --redact-query need a name")
        }
        let headers = !redactHeaders.isEmpty ? redactHeaders : rules?.headers ?? FlowRedaction.defaultHeaders
        let query = (rules?.query ?? []) + redactQuery
        var fields: [FlowRedaction.JSONField] = []
        for (text, origin) in (rules?.jsonFields ?? []).map({ ($0, "rules document, redaction.jsonFields") }) + redactJSONFields.map({ ($0, "--redact-json-field") }) {
            do {
                fields.append(try FlowRedaction.JSONField(parsing: text))
            } catch {
                throw ValidationError("\(origin): \(error)")
            }
        }
        return FlowRedaction(headers: headers, queryParameters: query, jsonFields: fields)
    }
}
