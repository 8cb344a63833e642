import Foundation
import Hummingbird
import KagamiJSON
import KagamiRules

/// How the admin API reaches the proxy's rules: the document in force, and a way to replace it.
public struct RulesControl: Sendable {
    /// The rules document in force (empty when there are none).
    public var current: @Sendable () -> RuleSet
    /// Puts `rules` in force for the next request. Throws `RuleDocumentError` when the engine
    /// can't use them (the rules in force stay); any other error means they could not be kept
    /// (e.g. saved), and the rules in force stay too.
    public var replace: @Sendable (RuleSet) throws -> Void
    /// Where Map Local reads files, and where a response saved as a local file may go.
    public var mapLocalFolders: MapLocalFolders

    public init(
        current: @escaping @Sendable () -> RuleSet, replace: @escaping @Sendable (RuleSet) throws -> Void, mapLocalFolders: MapLocalFolders
    ) {
        self.current = current
        self.replace = replace
        self.mapLocalFolders = mapLocalFolders
    }
}

/// `GET/PUT /api/rules` (the rules document, same schema as a rules file),
/// `GET /api/rules/schema` (what the editor offers for each kind of rewrite) and
/// `GET /api/throttle/presets` (every preset with its figures).
struct RulesAPI: Sendable {
    let control: RulesControl?
    /// A rules document is small; this stops a runaway upload.
    static let maximumDocumentBytes = 4 << 20

    func register(on router: Router<some RequestContext>) {
        router.get("/api/rules") { _, _ in try self.document() }
        router.put("/api/rules") { request, context in try await self.replace(request, context: context) }
        router.get("/api/rules/schema") { _, _ in self.schema() }
        router.get("/api/throttle/presets") { _, _ in self.presets() }
    }

    /// Each Rewrite type with the sides it can act on (`where`) and which of its fields mean
    /// something: a name to match and replace (`named`), a `match`, a `replace`; and the
    /// folders Map Local may use (`mapLocalFolders`: where relative paths start, then the
    /// others), for the editor to say where files go.
    func schema() -> Response {
        var schema: JSONObject = [
            "rewriteTypes": .array(RewriteRuleType.allCases.map { type in
                [
                    "type": .string(type.rawValue),
                    "where": .array(type.targets.map { .string($0.rawValue) }),
                    "named": .bool(type.isNamed),
                    "match": .bool(type.matches),
                    "replace": .bool(type.replaces),
                ]
            }),
        ]
        schema["mapLocalFolders"] = .array((control?.mapLocalFolders.roots ?? []).map(JSONValue.string))
        return jsonResponse(.object(schema))
    }

    func document() throws(APIError) -> Response {
        guard let control else { throw APIError.noProxy }
        do {
            return Self.jsonText(try control.current().jsonText())
        } catch {
            throw APIError(.internalServerError, "the rules in force could not be written as JSON: \(error)")
        }
    }

    func replace(_ request: Request, context: some RequestContext) async throws -> Response {
        guard let control else { throw APIError.noProxy }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maximumDocumentBytes)
        } catch {
            throw APIError(.contentTooLarge, "a rules document is at most \(Self.maximumDocumentBytes >> 20) MB")
        }
        guard let text = String(validating: body.readableBytesView, as: UTF8.self) else {
            throw APIError(.badRequest, "the rules document is not UTF-8 text")
        }
        let rules: RuleSet
        do {
            rules = try RuleSet(parsing: text, file: "request body")
            try control.replace(rules)
        } catch let error as RuleDocumentError {
            throw Self.invalid(error)
        } catch {
            throw APIError(.internalServerError, "the rules were not changed: \(error)")
        }
        return try document()
    }

    func presets() -> Response {
        let custom = control?.current().throttling.customPresets ?? []
        var list: [JSONValue] = []
        for (profile, builtIn) in ThrottleProfile.builtInPresets.map({ ($0, true) }) + custom.map({ ($0, false) }) {
            var object = Self.json(profile)
            object["builtIn"] = .bool(builtIn)
            list.append(.object(object))
        }
        return jsonResponse(["presets": .array(list)])
    }

    /// A refused document: `error` as a user reads it, and each part on its own for a UI.
    static func invalid(_ error: RuleDocumentError) -> APIError {
        var details: JSONObject = ["field": .string(error.field), "message": .string(error.message)]
        details["line"] = error.line.map { .integer($0) } ?? .null
        details["column"] = error.column.map { .integer($0) } ?? .null
        return APIError(.badRequest, error.description, details: details)
    }

    static func json(_ profile: ThrottleProfile) -> JSONObject {
        let bandwidth: (Double) -> JSONValue = { $0 == $0.rounded() ? .integer(Int($0)) : .number($0) }
        return [
            "name": .string(profile.name),
            "downloadKbps": bandwidth(profile.downloadKbps),
            "uploadKbps": bandwidth(profile.uploadKbps),
            "utilisation": bandwidth(profile.utilisation),
            "latencyMs": .integer(profile.latencyMs),
            "mtu": .integer(profile.mtu),
            "reliability": bandwidth(profile.reliability),
            "stability": bandwidth(profile.stability),
            "unstableQuality": ["low": bandwidth(profile.unstableQuality.low), "high": bandwidth(profile.unstableQuality.high)],
        ]
    }

    static func jsonText(_ text: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text + "\n"))
        )
    }
}
