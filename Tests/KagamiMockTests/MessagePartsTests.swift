// What requests carry beyond JSON bodies, checked by the mock (and the contract check, which
// shares the request check): form and multipart bodies field by field, cookie parameters,
// formats with a precise definition, readOnly/writeOnly by direction. curl is the client.
import Foundation
import KagamiJSON
import KagamiMock
import KagamiTesting
import Testing

@Suite struct MessagePartsTests {
    static let document = """
        openapi: 3.1.0
        info: {title: Accounts, version: "1"}
        paths:
          /signup:
            post:
              requestBody:
                required: true
                content:
                  application/x-www-form-urlencoded:
                    schema:
                      type: object
                      required: [email, age]
                      properties:
                        email: {type: string, format: email}
                        age: {type: integer, minimum: 13}
                        tags: {type: array, items: {type: string, enum: [news, offers]}}
              responses:
                "204": {description: signed up}
          /avatars:
            post:
              requestBody:
                required: true
                content:
                  multipart/form-data:
                    schema:
                      type: object
                      required: [name, avatar]
                      properties:
                        name: {type: string, minLength: 1}
                        avatar: {type: string, format: binary}
                        meta: {type: object, required: [version], properties: {version: {type: integer}}}
              responses:
                "201": {description: stored}
          /session:
            get:
              parameters:
                - {name: session, in: cookie, required: true, schema: {type: string, format: uuid}}
                - {name: since, in: query, schema: {type: string, format: date-time}}
                - {name: limit, in: query, schema: {type: integer, format: int32}}
              responses:
                "200":
                  description: the session
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [id, password, name]
                        properties:
                          id: {type: string, format: uuid, readOnly: true}
                          name: {type: string, pattern: "^[A-Z][a-z]+$", minLength: 4}
                          password: {type: string, writeOnly: true, minLength: 8}
          /users:
            post:
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [id, password]
                      properties:
                        id: {type: string, readOnly: true}
                        password: {type: string, writeOnly: true, minLength: 8}
              responses:
                "201": {description: created}
        """

    @Test func formBodiesAreCheckedFieldByField() async throws {
        let server = try await MockServer.start(text: Self.document)
        defer { Task { try await server.stop() } }
        let url = server.url + "/signup"
        let form = "Content-Type: application/x-www-form-urlencoded"
        #expect(try await MockClient.curl("POST", url, headers: [form], body: "email=ann%40example.com&age=30&tags=news&tags=offers").status == 204)
        // A required field missing: a form is an object whose required members must be there.
        let missing = try await MockClient.curl("POST", url, headers: [form], body: "email=ann%40example.com")
        #expect(missing.status == 422, "\(missing.body)")
        #expect(missing.body.contains("age"), "\(missing.body)")
        // Field text read as the property's type: "abc" is no integer, 12 is under the minimum.
        #expect(try await MockClient.curl("POST", url, headers: [form], body: "email=ann%40example.com&age=abc").status == 422)
        #expect(try await MockClient.curl("POST", url, headers: [form], body: "email=ann%40example.com&age=12").status == 422)
        #expect(try await MockClient.curl("POST", url, headers: [form], body: "email=ann%40example.com&age=30&tags=spam").status == 422)
        // RFC 5321: a mailbox is local-part "@" domain.
        #expect(try await MockClient.curl("POST", url, headers: [form], body: "email=ann.example.com&age=30").status == 422)
    }

    @Test func multipartBodiesAreCheckedPartByPart() async throws {
        let server = try await MockServer.start(text: Self.document)
        defer { Task { try await server.stop() } }
        let avatar = try TemporaryFolder.make("multipart").appendingPathComponent("avatar.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A]).write(to: avatar)
        let url = server.url + "/avatars"
        let stored = try await MockClient.curl("POST", url, options: [
            "-F", "name=Ann", "-F", "avatar=@\(avatar.path);type=image/png", "-F", #"meta={"version": 2};type=application/json"#,
        ])
        #expect(stored.status == 201, "\(stored.body)")
        let noFile = try await MockClient.curl("POST", url, options: ["-F", "name=Ann"])
        #expect(noFile.status == 422, "\(noFile.body)")
        #expect(noFile.body.contains("avatar"), "\(noFile.body)")
        // A part sent as JSON is read as JSON and held to its property's schema.
        let badMeta = try await MockClient.curl("POST", url, options: [
            "-F", "name=Ann", "-F", "avatar=@\(avatar.path)", "-F", #"meta={"version": "two"};type=application/json"#,
        ])
        #expect(badMeta.status == 422, "\(badMeta.body)")
        #expect(try await MockClient.curl("POST", url, options: ["-F", "name=", "-F", "avatar=@\(avatar.path)"]).status == 422)
    }

    @Test func cookieParametersAndFormatsAreChecked() async throws {
        let server = try await MockServer.start(text: Self.document)
        defer { Task { try await server.stop() } }
        let url = server.url + "/session"
        let uuid = "Cookie: theme=dark; session=0b5a3c9e-2f4d-4e8a-9c1b-7d6e5f4a3b2c"
        #expect(try await MockClient.curl("GET", url, headers: [uuid]).status == 200)
        let absent = try await MockClient.curl("GET", url, headers: ["Cookie: theme=dark"])
        #expect(absent.status == 422)
        #expect(absent.body.contains("cookie"), "\(absent.body)")
        // RFC 9562: 8-4-4-4-12 hexadecimal digits.
        #expect(try await MockClient.curl("GET", url, headers: ["Cookie: session=0b5a3c9e-2f4d-4e8a-9c1b"]).status == 422)
        // RFC 3339 date-time needs the time and the offset; a date alone is a `date`.
        #expect(try await MockClient.curl("GET", url + "?since=2024-05-01T10:00:00Z", headers: [uuid]).status == 200)
        #expect(try await MockClient.curl("GET", url + "?since=2024-05-01", headers: [uuid]).status == 422)
        #expect(try await MockClient.curl("GET", url + "?since=2024-02-30T10:00:00Z", headers: [uuid]).status == 422)
        // int32: a signed 32-bit whole number.
        #expect(try await MockClient.curl("GET", url + "?limit=2147483647", headers: [uuid]).status == 200)
        #expect(try await MockClient.curl("GET", url + "?limit=2147483648", headers: [uuid]).status == 422)
    }

    @Test func noAssertFormatAcceptsAnyValueForAFormat() async throws {
        let server = try await MockServer.start(text: Self.document, configuration: .init(reloadInterval: nil, assertsFormat: false))
        defer { Task { try await server.stop() } }
        let url = server.url + "/session"
        #expect(try await MockClient.curl("GET", url + "?since=2024-05-01", headers: ["Cookie: session=abc"]).status == 200)
        // int32's range is the format's, not a maximum the reader adds.
        #expect(try await MockClient.curl("GET", url + "?limit=2147483648", headers: ["Cookie: session=abc"]).status == 200)
        // Types are still checked.
        #expect(try await MockClient.curl("GET", url + "?limit=many", headers: ["Cookie: session=abc"]).status == 422)
    }

    @Test func readOnlyAndWriteOnlyFollowTheDirection() async throws {
        let server = try await MockServer.start(text: Self.document)
        defer { Task { try await server.stop() } }
        let uuid = "Cookie: session=0b5a3c9e-2f4d-4e8a-9c1b-7d6e5f4a3b2c"
        let session = try await MockClient.curl("GET", server.url + "/session", headers: [uuid])
        // The body written from the schema: no writeOnly password in a response, the readOnly
        // id there, and the name from its pattern and length.
        let body = try #require(session.json)
        #expect(body["password"] == nil, "\(session.body)")
        #expect(body["id"]?.stringValue?.count == 36, "\(session.body)")
        let name = try #require(body["name"]?.stringValue)
        #expect(name.count >= 4 && name.first?.isUppercase == true && name.dropFirst().allSatisfy(\.isLowercase), "\(name)")
        // A request leaves the readOnly id out, though the schema lists it as required.
        let json = "Content-Type: application/json"
        #expect(try await MockClient.curl("POST", server.url + "/users", headers: [json], body: #"{"password": "correct horse"}"#).status == 201)
        #expect(try await MockClient.curl("POST", server.url + "/users", headers: [json], body: #"{"id": "7"}"#).status == 422)
    }
}
