// The SSL Proxying list (which CONNECT targets are decrypted), read and replaced while the proxy runs.
import Foundation
import Hummingbird
import KagamiJSON
import KagamiControl
import KagamiRules

/// How the admin API reaches the proxy's SSL Proxying list.
public struct SSLProxyingControl: Sendable {
    /// HTTPS interception is set up; without it the list decides nothing (every tunnel is relayed).
    public var intercepting: Bool
    public var current: @Sendable () -> SSLProxyingList
    /// Puts the list in force for the next CONNECT; an error means it could not be kept (saved)
    /// and the list in force stays.
    public var replace: @Sendable (SSLProxyingList) throws -> Void
    /// Where the list is kept between runs; nil when it lives only as long as the process.
    public var file: String?

    public init(intercepting: Bool, current: @escaping @Sendable () -> SSLProxyingList,
                replace: @escaping @Sendable (SSLProxyingList) throws -> Void, file: String? = nil) {
        self.intercepting = intercepting
        self.current = current
        self.replace = replace
        self.file = file
    }
}

extension SSLProxyingList {
    /// `{"include": ["api.example.com", "*.test:8443"], "exclude": [...]}`, as the admin API and the
    /// `--ssl-proxying-file` hold it.
    public var json: JSONValue {
        ["include": .array(include.map { .string($0.hostAndPort) }), "exclude": .array(exclude.map { .string($0.hostAndPort) })]
    }

    /// Reads the JSON form; an error names the member (`exclude[1]`).
    public init(json: JSONValue) throws(SSLProxyingListError) {
        guard json.objectValue != nil else { throw SSLProxyingListError(field: "", message: "expected a JSON object, found \(json.typeName)") }
        func patterns(_ name: String) throws(SSLProxyingListError) -> [Location] {
            guard let value = json[name] else { return [] }
            guard let items = value.arrayValue else { throw SSLProxyingListError(field: name, message: "expected a list of hosts, found \(value.typeName)") }
            var result: [Location] = []
            for (index, item) in items.enumerated() {
                guard let text = item.stringValue, let pattern = Location(hostAndPort: text) else {
                    throw SSLProxyingListError(field: "\(name)[\(index)]", message: "expected host or host:port (*, ? and [a-z] wildcards), found \(item.serialized())")
                }
                result.append(pattern)
            }
            return result
        }
        self.init(include: try patterns("include"), exclude: try patterns("exclude"))
    }
}

public struct SSLProxyingListError: Error, CustomStringConvertible {
    public var field: String
    public var message: String
    public var description: String { field.isEmpty ? message : "\(field): \(message)" }
}

/// `GET /api/ssl-proxying` and `PUT /api/ssl-proxying`.
struct SSLProxyingAPI: Sendable {
    let control: SSLProxyingControl?

    func register(on router: Router<some RequestContext>) {
        router.get("/api/ssl-proxying") { _, _ in try self.document() }
        router.put("/api/ssl-proxying") { request, _ in
            try await self.replace(text: try await BreakpointAPI.text(of: request))
        }
    }

    func document() throws(APIError) -> Response {
        guard let control else { throw APIError.noProxy }
        var object = control.current().json.objectValue ?? [:]
        object["intercepting"] = .bool(control.intercepting)
        object["file"] = control.file.map(JSONValue.string) ?? .null
        // Before the first save the file may not exist yet: the panel says so.
        object["fileExists"] = .bool(control.file.map { FileManager.default.fileExists(atPath: $0) } ?? false)
        return jsonResponse(.object(object))
    }

    func replace(text: String) async throws -> Response {
        guard let control else { throw APIError.noProxy }
        let list: SSLProxyingList
        do {
            list = try SSLProxyingList(json: try JSONValue(parsing: text))
        } catch let error as SSLProxyingListError {
            throw APIError(.badRequest, error.description, details: ["field": .string(error.field)])
        } catch {
            throw APIError(.badRequest, "not JSON: \(error)")
        }
        do {
            try control.replace(list)
        } catch {
            throw APIError(.internalServerError, "the list could not be saved, so the one in force stays: \(error)")
        }
        return try document()
    }
}
