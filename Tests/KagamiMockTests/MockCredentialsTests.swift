// The mock asks for the credentials an operation's `security` names (OpenAPI 3 "Security
// Requirement Object"): a request carrying none of the alternatives is a 401; any value in the
// right place is accepted, since a mock has no credentials to compare with. curl is the client.
@testable import KagamiMock
import KagamiTesting
import Testing

@Suite struct MockCredentialsTests {
    static let description = """
    openapi: 3.0.3
    info: {title: T, version: '1'}
    security:
      - bearer: []
    paths:
      /orders:
        get:
          responses:
            '200':
              description: ok
              content:
                application/json:
                  schema: {type: array, items: {type: integer}}
      /keys:
        get:
          security:
            - apiKey: []
              session: []
            - basic: []
          responses:
            '200': {description: ok}
            '401':
              description: no credentials
              content:
                application/json:
                  schema: {type: object, properties: {error: {type: string}}}
                  example: {error: sign in}
      /status:
        get:
          security:
            - {}
            - bearer: []
          responses:
            '200': {description: ok}
      /token:
        get:
          security:
            - query: []
          responses:
            '200': {description: ok}
    components:
      securitySchemes:
        bearer: {type: http, scheme: bearer}
        basic: {type: http, scheme: basic}
        apiKey: {type: apiKey, in: header, name: X-API-Key}
        session: {type: apiKey, in: cookie, name: sid}
        query: {type: apiKey, in: query, name: key}
    """

    @Test func aRequestWithoutTheCredentialsItsOperationNamesIsUnauthorized() async throws {
        let server = try await MockServer.start(text: Self.description, format: .openAPI)
        defer { Task { try await server.stop() } }
        // The document's `security` applies to /orders: a bearer token.
        let none = try await MockClient.curl("GET", server.url + "/orders")
        #expect(none.status == 401, "\(none.body)")
        #expect(none.body.contains("urn:kagami:mock:no-credentials") && none.body.contains("Authorization header (bearer)"), "\(none.body)")
        let basic = try await MockClient.curl("GET", server.url + "/orders", headers: ["Authorization: Basic dTpw"])
        #expect(basic.status == 401, "another scheme than the one asked for")
        let bearer = try await MockClient.curl("GET", server.url + "/orders", headers: ["Authorization: Bearer anything"])
        #expect(bearer.status == 200, "\(bearer.body)")
        // /keys: an API key header and a session cookie together, or basic; its own 401 answers.
        let keyOnly = try await MockClient.curl("GET", server.url + "/keys", headers: ["X-API-Key: k"])
        #expect(keyOnly.status == 401)
        #expect(keyOnly.json?["error"]?.stringValue == "sign in", "\(keyOnly.body)")
        let both = try await MockClient.curl("GET", server.url + "/keys", headers: ["X-API-Key: k", "Cookie: theme=dark; sid=s1"])
        #expect(both.status == 200, "\(both.body)")
        let viaBasic = try await MockClient.curl("GET", server.url + "/keys", headers: ["Authorization: basic dTpw"])
        #expect(viaBasic.status == 200, "\(viaBasic.body)")
        // An empty requirement makes credentials optional.
        let anonymous = try await MockClient.curl("GET", server.url + "/status")
        #expect(anonymous.status == 200, "\(anonymous.body)")
        let inQuery = try await MockClient.curl("GET", server.url + "/token?key=abc")
        #expect(inQuery.status == 200, "\(inQuery.body)")
        let emptyKey = try await MockClient.curl("GET", server.url + "/token?key=")
        #expect(emptyKey.status == 401, "\(emptyKey.body)")
    }

    @Test func withoutValidationNoCredentialsAreAskedFor() async throws {
        let server = try await MockServer.start(text: Self.description, format: .openAPI, configuration: .init(host: "127.0.0.1", port: 0, validates: false))
        defer { Task { try await server.stop() } }
        let none = try await MockClient.curl("GET", server.url + "/orders")
        #expect(none.status == 200, "\(none.body)")
    }
}
