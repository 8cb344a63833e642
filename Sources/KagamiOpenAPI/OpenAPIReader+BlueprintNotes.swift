// What of an OpenAPI document API Blueprint has no words for and the contract model does not
// hold either, so `kagami convert --to apib` can name each with its place. (What the contract
// holds and a Blueprint can't say — header and cookie parameters, parameter keywords,
// `default` responses — `BlueprintWriter` names itself.)
import KagamiContract
import KagamiJSON
import enum KagamiJSONSchema.JSONPointer

extension OpenAPIReader {
    /// Security schemes and requirements, callbacks, links, webhooks, servers after the first,
    /// the first one's description and server variables, tags after an operation's first, deprecation, external docs,
    /// multipart encodings and response header schemas, each with its line. Empty for a
    /// document that does not read.
    public static func blueprintNotes(_ text: String) -> [ConversionNote] {
        guard let read = try? OpenAPISource.readAsOpenAPI3(text) else { return [] }
        let (document, locator) = (read.value, read.locator)
        var notes: [ConversionNote] = []
        func note(_ path: [String], _ message: String) {
            // A 2.0 document's parts named where the 2.0 text has them.
            let written = read.swagger == nil ? path : SwaggerTranslation.swaggerPath(of: path)
            notes.append(ConversionNote("\(pointer(written)): \(message)", at: locator.location(of: path)))
        }
        func names(_ value: JSONValue?) -> [String] { value?.objectValue?.keys.map { $0 } ?? [] }
        func requirements(_ value: JSONValue?, at path: [String]) {
            guard let list = value?.arrayValue, !list.isEmpty else { return }
            let schemes = Set(list.flatMap { names($0) }).sorted()
            note(path, "security requirement\(list.count == 1 ? "" : "s") (\(schemes.isEmpty ? "none" : schemes.joined(separator: ", "))): a Blueprint has no security; left out")
        }
        requirements(document["security"], at: ["security"])
        for name in names(document["components"]?["securitySchemes"]) {
            let scheme = document["components"]?["securitySchemes"]?[name]
            let kind = [scheme?["type"]?.stringValue, scheme?["scheme"]?.stringValue, scheme?["in"]?.stringValue].compactMap { $0 }.joined(separator: " ")
            note(["components", "securitySchemes", name], "security scheme '\(name)'\(kind.isEmpty ? "" : " (\(kind))"): a Blueprint has no security; left out")
        }
        for name in names(document["webhooks"]) {
            note(["webhooks", name], "webhook '\(name)': a Blueprint describes only requests to the API; left out")
        }
        for (index, server) in (document["servers"]?.arrayValue ?? []).enumerated() {
            if index > 0 {
                note(["servers", String(index)], "server '\(server["url"]?.stringValue ?? "")': a Blueprint has one HOST (the first server's); left out")
            }
            if index == 0, let text = server["description"]?.stringValue, !text.isEmpty {
                note(["servers", "0", "description"], "the server's description: a Blueprint's HOST is a URL alone; left out")
            }
            if server["variables"] != nil {
                note(["servers", String(index), "variables"], "server variables: a Blueprint's HOST is one URL; left out")
            }
        }
        if document["externalDocs"] != nil { note(["externalDocs"], "external documentation: left out") }
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            if item["servers"] != nil { note(["paths", path, "servers"], "servers of a path: a Blueprint has one HOST; left out") }
            for method in OpenAPIValuesReader.methods {
                guard let operation = item[method] else { continue }
                let at = ["paths", path, method]
                requirements(operation["security"], at: at + ["security"])
                for name in names(operation["callbacks"]) {
                    note(at + ["callbacks", name], "callback '\(name)': a Blueprint describes only requests to the API; left out")
                }
                if operation["deprecated"]?.boolValue == true { note(at + ["deprecated"], "deprecated: a Blueprint can't mark an action so; left out") }
                if let tags = operation["tags"]?.arrayValue, tags.count > 1 {
                    note(at + ["tags"], "tags after the first (\(tags.dropFirst().compactMap(\.stringValue).joined(separator: ", "))): a Blueprint action sits in one group; left out")
                }
                if operation["externalDocs"] != nil { note(at + ["externalDocs"], "external documentation: left out") }
                if operation["servers"] != nil { note(at + ["servers"], "servers of an operation: a Blueprint has one HOST; left out") }
                for (mediaType, content) in operation["requestBody"]?["content"]?.objectValue ?? [:] where content["encoding"] != nil {
                    note(at + ["requestBody", "content", mediaType, "encoding"], "the encoding of form fields: a Blueprint has no form for it; left out")
                }
                for (status, response) in operation["responses"]?.objectValue ?? [:] {
                    responseNotes(response, at: at + ["responses", status], in: document, note: note)
                }
            }
        }
        for (name, response) in document["components"]?["responses"]?.objectValue ?? [:] {
            responseNotes(response, at: ["components", "responses", name], in: document, note: note)
        }
        return notes
    }

    private static func responseNotes(_ response: JSONValue, at path: [String], in document: JSONValue, note: ([String], String) -> Void) {
        for name in response["links"]?.objectValue?.keys.map({ $0 }) ?? [] {
            note(path + ["links", name], "link '\(name)': a Blueprint has no links between responses and operations; left out")
        }
        for (name, written) in response["headers"]?.objectValue ?? [:] {
            // A header of `components/headers` is noted where the response uses it.
            let header = written["$ref"]?.stringValue.flatMap { $0.hasPrefix("#") ? resolve(pointer: String($0.dropFirst()), in: document) : nil } ?? written
            let lost = [
                ("schema", "its schema"), ("content", "its schema"), ("required", "whether it is required"),
                ("deprecated", "its deprecation"), ("description", "its description"),
            ].filter { header[$0.0] != nil }.map(\.1)
            guard !lost.isEmpty else { continue }
            let listed = lost.count == 1 ? lost[0] : lost.dropLast().joined(separator: ", ") + " and " + (lost.last ?? "")
            note(path + ["headers", name], "response header '\(name)': a Blueprint shows it as a value; \(listed) \(lost.count == 1 ? "is" : "are") left out")
        }
    }

    private static func pointer(_ path: [String]) -> String {
        "#" + JSONPointer.string(path)
    }
}
