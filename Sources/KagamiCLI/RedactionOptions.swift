import ArgumentParser
import KagamiRules
import KagamiStore

/// What is replaced by a marker before a flow is written to the session (`proxy`, `push`):
/// credentials by default, and what the options and the rules document's `redaction` section
/// add. A shared store always redacts; a session file, which stays on this machine, only when
/// redaction is asked for in any form, and then exactly as a shared store would.
struct RedactionOptions: ParsableArguments {
    @Option(name: .customLong("redact-header"), help: ArgumentHelp(
        "Replace this header's values by a marker before anything is written to the session (the shared store, or the session file and the files beside it); repeatable. Default: the rules document's redaction.headers, else Authorization, Proxy-Authorization, Cookie, Set-Cookie: always with --store, in a session file once any --redact option or the rules document's redaction section asks for redaction.",
        valueName: "name"))
    var redactHeaders: [String] = []

    @Option(name: .customLong("redact-query"), help: ArgumentHelp(
        "Replace the values of this query parameter (and form field) by a marker before anything is written to the session; repeatable, added to the rules document's redaction.query.",
        valueName: "name"))
    var redactQuery: [String] = []

    @Option(name: .customLong("redact-json-field"), help: ArgumentHelp(
        "Replace this field of JSON bodies and WebSocket text messages by a marker before anything is written to the session: a member name at any depth, or a JSON pointer (/user/password); repeatable, added to the rules document's redaction.jsonFields.",
        valueName: "name|pointer"))
    var redactJSONFields: [String] = []

    @Flag(help: "Write values as they are (no redaction at all), with --store too.")
    var noRedaction = false

    func validate() throws {
        _ = try redaction(rules: nil)
    }

    /// What was asked for: nil when no option and no `redaction` section of the rules document
    /// says anything (a shared store then redacts credentials, a session file nothing).
    func asked(rules: RedactionSettings?) throws -> FlowRedaction? {
        let asked = noRedaction || !redactHeaders.isEmpty || !redactQuery.isEmpty || !redactJSONFields.isEmpty || rules != nil
        return asked ? try redaction(rules: rules) : nil
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
