import KagamiFlow
// The description as one self-contained HTML page: readable without JavaScript.
import KagamiContract
import KagamiContractCheck
import KagamiJSON
import KagamiJSONSchema

public enum DocsPage {
    /// The whole page; `baseURL` goes into the curl lines (the mock's own URL when served by it).
    public static func render(_ contract: APIContract, baseURL: String = "http://127.0.0.1:3000") -> String {
        var html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(MarkupText.escaped(contract.name.isEmpty ? "API" : contract.name))</title>
        <style>\(style)</style></head><body>
        <nav><h2>\(MarkupText.escaped(contract.name.isEmpty ? "API" : contract.name))</h2>\(navigation(contract))</nav>
        <main><h1>\(MarkupText.escaped(contract.name.isEmpty ? "API" : contract.name))</h1>
        <p class="format">\(MarkupText.escaped(contract.format.rawValue))</p>
        \(paragraphs(contract.description))
        \(typedClient(contract, baseURL: baseURL))
        """
        for group in contract.groups {
            if !group.name.isEmpty {
                html += "<section class=\"group\"><h2 id=\"\(anchor("group", group.name))\">\(MarkupText.escaped(group.name))</h2>\(paragraphs(group.description))"
            }
            for resource in group.resources {
                html += "<section class=\"resource\"><h3 id=\"\(anchor("resource", resource.name + resource.uriTemplate))\">"
                html += "\(MarkupText.escaped(resource.name.isEmpty ? resource.uriTemplate : resource.name)) <code>\(MarkupText.escaped(resource.uriTemplate))</code></h3>"
                html += paragraphs(resource.description)
                for action in resource.actions { html += render(action, baseURL: baseURL) }
                html += "</section>"
            }
            if !group.name.isEmpty { html += "</section>" }
        }
        html += "</main></body></html>\n"
        return html
    }

    /// How to talk to this API from Swift with a generated client (docs/CONVERT.md).
    public static func clientLine(_ contract: APIContract, baseURL: String) -> String {
        let basePath = contract.servers.first.flatMap { BaseURL($0.url)?.path } ?? ""
        return "let client = Client(serverURL: URL(string: \"\(baseURL)\(basePath)\")!, transport: AsyncHTTPClientTransport())"
    }

    private static func typedClient(_ contract: APIContract, baseURL: String) -> String {
        """
        <section class="client"><h2 id="typed-client">Typed Swift client</h2>
        <p><code>kagami convert DESCRIPTION --to openapi -o openapi.json --server \(MarkupText.escaped(baseURL))</code>, then
        swift-openapi-generator's build plugin on <code>openapi.json</code>; the generated client talks to this mock:</p>
        <pre><code>\(MarkupText.escaped(clientLine(contract, baseURL: baseURL)))</code></pre></section>
        """
    }

    private static func navigation(_ contract: APIContract) -> String {
        var html = "<ul>"
        for group in contract.groups {
            if !group.name.isEmpty { html += "<li class=\"nav-group\"><a href=\"#\(anchor("group", group.name))\">\(MarkupText.escaped(group.name))</a></li>" }
            for resource in group.resources {
                for action in resource.actions {
                    html += "<li><a href=\"#\(actionAnchor(action))\"><span class=\"method \(action.method.lowercased())\">\(MarkupText.escaped(action.method))</span> \(MarkupText.escaped(action.name.isEmpty ? action.uriTemplate : action.name))</a></li>"
                }
            }
        }
        return html + "</ul>"
    }

    private static func render(_ action: Action, baseURL: String) -> String {
        var html = "<article class=\"action\" id=\"\(actionAnchor(action))\">"
        html += "<h4><span class=\"method \(action.method.lowercased())\">\(MarkupText.escaped(action.method))</span> <code>\(MarkupText.escaped(action.uriTemplate))</code>"
        if !action.name.isEmpty { html += " <span class=\"name\">\(MarkupText.escaped(action.name))</span>" }
        html += "</h4>" + paragraphs(action.description)
        if !action.parameters.isEmpty {
            html += "<table class=\"parameters\"><thead><tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th><th>Default</th><th>Example</th><th>Description</th></tr></thead><tbody>"
            for parameter in action.parameters {
                let type = parameter.type ?? parameter.schema.flatMap { schema -> String? in
                    if case .object(let object) = schema, case .string(let type)? = object["type"] { return type }
                    return nil
                } ?? ""
                let members = parameter.members.isEmpty ? "" : " (\(parameter.members.joined(separator: ", ")))"
                html += "<tr><td><code>\(MarkupText.escaped(parameter.name))</code></td><td>\(parameter.location.rawValue)</td>"
                html += "<td>\(MarkupText.escaped(type + members))</td><td>\(parameter.required ? "yes" : "no")</td>"
                html += "<td>\(MarkupText.escaped(parameter.defaultValue ?? ""))</td><td>\(MarkupText.escaped(parameter.example ?? ""))</td><td>\(MarkupText.escaped(parameter.description))</td></tr>"
            }
            html += "</tbody></table>"
        }
        html += "<p class=\"try\">Try it: <code>\(MarkupText.escaped(curl(for: action, baseURL: baseURL)))</code></p>"
        for example in action.examples {
            if !example.name.isEmpty { html += "<h5>Example: \(MarkupText.escaped(example.name))</h5>" }
            for request in example.requests {
                html += "<div class=\"message request\"><h6>Request\(request.name.isEmpty ? "" : " " + MarkupText.escaped(request.name))</h6>\(payload(request.payload, .request))</div>"
            }
            for response in example.responses {
                let title = "Response \(response.status == 0 ? "default" : String(response.status))\(response.name.isEmpty ? "" : " " + MarkupText.escaped(response.name))"
                html += "<div class=\"message response\"><h6>\(title)</h6>\(payload(response.payload, .response))\(declaredHeaders(response))</div>"
            }
        }
        return html + "</article>"
    }

    /// The headers an OpenAPI response declares: whether each is required or deprecated, its
    /// description and its schema (or the media type of its `content`).
    private static func declaredHeaders(_ response: Response) -> String {
        guard !response.declaredHeaders.isEmpty else { return "" }
        var html = "<table class=\"headers\"><thead><tr><th>Header</th><th>Required</th><th>Schema</th><th>Description</th></tr></thead><tbody>"
        for header in response.declaredHeaders {
            let name = "<code>\(MarkupText.escaped(header.name))</code>" + (header.deprecated ? " <span class=\"deprecated\">deprecated</span>" : "")
            var schema = header.schema.map { "<pre class=\"schema json\">\(highlighted($0.serialized(.prettyPrinted)))</pre>" } ?? ""
            if let mediaType = header.mediaType { schema = "<code>\(MarkupText.escaped(mediaType))</code>" + schema }
            html += "<tr><td>\(name)</td><td>\(header.required ? "yes" : "no")</td><td>\(schema)</td><td>\(MarkupText.escaped(header.description))</td></tr>"
        }
        return html + "</tbody></table>"
    }

    private static func payload(_ payload: MessagePayload, _ direction: JSONSchema.Direction) -> String {
        var html = paragraphs(payload.description)
        if !payload.headers.isEmpty {
            html += "<pre class=\"headers\">" + payload.headers.map { "\(MarkupText.escaped($0.name)): \(MarkupText.escaped($0.value))" }.joined(separator: "\n") + "</pre>"
        }
        if let body = payload.body(for: direction), !body.isEmpty {
            if let json = try? JSONValue(parsing: body) {
                html += "<pre class=\"body json\">\(highlighted(json.serialized(.prettyPrinted)))</pre>"
            } else {
                html += "<pre class=\"body\">\(MarkupText.escaped(body))</pre>"
            }
        }
        if let schema = payload.schema {
            html += "<details><summary>Schema</summary><pre class=\"schema json\">\(highlighted(schema.serialized(.prettyPrinted)))</pre></details>"
        }
        return html
    }

    /// A curl command for the action's first documented request, with example parameter values.
    public static func curl(for action: Action, baseURL: String) -> String {
        let path = exampleTarget(for: action)
        var parts = ["curl", "-i"]
        if action.method.uppercased() != "GET" { parts += ["-X", action.method.uppercased()] }
        let request = action.examples.first?.requests.first
        for header in request?.payload.headers ?? [] where header.name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            parts += ["-H", shellQuoted("\(header.name): \(header.value)")]
        }
        if let body = request?.payload.body(for: .request), !body.isEmpty {
            let compact = (try? JSONValue(parsing: body)).map { $0.serialized() } ?? body
            parts += ["--data", shellQuoted(compact)]
        }
        parts.append(shellQuoted(baseURL + path))
        return parts.joined(separator: " ")
    }

    /// The action's path with each variable replaced by its example (or default, first member, `1`).
    public static func exampleTarget(for action: Action) -> String {
        var result = ""
        var rest = Substring(action.uriTemplate)
        var query: [String] = []
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            var expression = rest[rest.index(after: open)..<close]
            let isQuery = expression.first == "?" || expression.first == "&"
            if let first = expression.first, "+#./;?&".contains(first) { expression = expression.dropFirst() }
            for variable in expression.split(separator: ",") {
                let name = String(variable.split(separator: ":").first ?? variable).replacingOccurrences(of: "*", with: "")
                let parameter = action.parameters.first { $0.name == name }
                if isQuery {
                    // Optional query parameters are left out of the example, as a client would.
                    guard let parameter, parameter.required else { continue }
                    query.append("\(name)=\(exampleValue(parameter))")
                } else {
                    result += parameter.map(exampleValue) ?? "1"
                }
            }
            rest = rest[rest.index(after: close)...]
        }
        result += rest
        if !query.isEmpty { result += (result.contains("?") ? "&" : "?") + query.joined(separator: "&") }
        return result
    }

    static func exampleValue(_ parameter: Parameter) -> String {
        let value = parameter.example ?? parameter.defaultValue ?? parameter.members.first ?? schemaExample(parameter.schema) ?? "1"
        return value.addingPercentEncodingForPath()
    }

    private static func schemaExample(_ schema: JSONValue?) -> String? {
        guard let schema else { return nil }
        switch JSONSchemaExample.example(for: schema, direction: .request) {
        case .string(let text): return text
        case .null, .array, .object: return nil
        case let other: return other.serialized()
        }
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static func actionAnchor(_ action: Action) -> String {
        anchor("action", action.method + " " + action.uriTemplate + " " + action.name)
    }

    private static func anchor(_ kind: String, _ text: String) -> String {
        kind + "-" + String(text.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }

    /// A description's prose, written in Markdown.
    private static func paragraphs(_ text: String) -> String {
        Markdown.html(text)
    }


    /// Pretty-printed JSON with keys, strings, numbers and literals wrapped in classed spans.
    static func highlighted(_ json: String) -> String {
        var out = ""
        var index = json.startIndex
        while index < json.endIndex {
            let character = json[index]
            if character == "\"" {
                var end = json.index(after: index)
                while end < json.endIndex, json[end] != "\"" {
                    if json[end] == "\\" { end = json.index(after: end) }
                    if end < json.endIndex { end = json.index(after: end) }
                }
                if end < json.endIndex { end = json.index(after: end) }
                let token = json[index..<end]
                let isKey = json[end...].first { $0 != " " } == ":"
                out += "<span class=\"\(isKey ? "k" : "s")\">\(MarkupText.escaped(String(token)))</span>"
                index = end
            } else if character == "-" || character.isNumber || character.isLetter {
                var end = index
                while end < json.endIndex, json[end] == "-" || json[end] == "." || json[end] == "+" || json[end].isLetter || json[end].isNumber {
                    end = json.index(after: end)
                }
                let token = String(json[index..<end])
                out += "<span class=\"\(token.first?.isLetter == true ? "l" : "n")\">\(MarkupText.escaped(token))</span>"
                index = end
            } else {
                out += MarkupText.escaped(String(character))
                index = json.index(after: index)
            }
        }
        return out
    }

    private static let style = """
    body{margin:0;font:15px/1.5 -apple-system,system-ui,sans-serif;color:#1d1d1f;display:flex}
    nav{width:260px;flex:none;padding:16px;background:#f5f5f7;border-right:1px solid #ddd;height:100vh;overflow:auto;position:sticky;top:0;box-sizing:border-box}
    nav ul{list-style:none;padding:0}nav li{margin:4px 0;font-size:13px}nav a{color:inherit;text-decoration:none}
    .nav-group{font-weight:600;margin-top:12px}
    main{padding:24px 40px;max-width:980px}
    .format{color:#666}
    .resource{border-top:1px solid #ddd;margin-top:24px}
    .action{margin:16px 0 32px}
    .method{display:inline-block;min-width:56px;text-align:center;border-radius:4px;color:#fff;font-size:12px;font-weight:700;padding:2px 6px;background:#666}
    .get{background:#2b7de9}.post{background:#2f9e44}.put,.patch{background:#e8590c}.delete{background:#c92a2a}
    .name{color:#555;font-weight:400}.deprecated{color:#c92a2a;font-size:12px}
    table.headers pre{margin:0;padding:4px 6px}
    table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
    th{background:#f5f5f7}
    pre{background:#f8f8fa;border:1px solid #e5e5ea;border-radius:6px;padding:10px;overflow:auto;font:12px/1.45 ui-monospace,Menlo,monospace}
    .try code{background:#1d1d1f;color:#f5f5f7;padding:4px 8px;border-radius:4px;font-size:12px;word-break:break-all}
    main p code,main li code{background:#f0f0f3;padding:1px 4px;border-radius:3px;font-size:.92em}blockquote{margin:8px 0;padding:2px 12px;border-left:3px solid #d0d0d6;color:#555}h3.md,h4.md,h5.md,h6.md{margin:16px 0 6px}
    h6{font-size:13px;margin:12px 0 4px}.response h6{color:#2f9e44}.request h6{color:#2b7de9}
    .k{color:#7c3aed}.s{color:#067d17}.n{color:#1750eb}.l{color:#c2410c}
    """
}

extension String {
    fileprivate func addingPercentEncodingForPath() -> String {
        var out = ""
        for byte in utf8 {
            let scalar = Character(Unicode.Scalar(byte))
            if byte < 0x80, scalar.isLetter || scalar.isNumber || "-._~".contains(scalar) {
                out.append(scalar)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded
            }
        }
        return out
    }

    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}
