// Selection, negotiation, validation and error shapes, with curl and AsyncHTTPClient as clients.
import AsyncHTTPClient
import Foundation
import KagamiFlow
import KagamiJSON
import KagamiTesting
@testable import KagamiMock
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing

private let notes = """
FORMAT: 1A

# Notes API

# Group Notes

## Notes [/notes{?limit}]

+ Parameters
    + limit (optional, number) - How many

### List Notes [GET]

+ Response 200 (application/json)

        [{"id": 1, "title": "Buy milk"}]

### Create a Note [POST]

+ Request Urgent (application/json)

    + Headers

            X-Priority: high

    + Body

            {"title": "Call Bob", "urgent": true}

+ Response 201 (application/json)

        {"id": 3, "urgent": true}

+ Request Normal (application/json)

    + Attributes
        + title: Buy milk (string, required)

+ Response 201 (application/json)

        {"id": 2}

+ Response 400 (application/json)

        {"error": "title is required"}

## Note [/notes/{id}]

+ Parameters
    + id (number) - The note

### Retrieve a Note [GET]

+ Response 200 (application/json)

    + Attributes
        + id: 1 (number)
        + title: Buy milk (string)

+ Response 404 (application/json)

        {"error": "no such note"}

+ Response 200 (text/plain)

        Buy milk

### Delete a Note [DELETE]

+ Response 204

## Latest Note [/notes/latest]

### Retrieve the Latest Note [GET]

+ Response 200 (application/json)

        {"latest": true}

## Tags [/tags/{tag}]

+ Parameters
    + tag (enum[string]) - A tag
        + Members
            + `home`
            + `work`

### Tagged Notes [GET]

+ Response 200 (application/json)

        []
"""

@Suite struct MockBehaviourTests {
    @Test func defaultLiteralBeatsVariableAndMSONBody() async throws {
        let server = try await MockServer.start(text: notes)
        defer { Task { try await server.stop() } }
        let list = try await MockClient.curl("GET", server.url + "/notes")
        #expect(list.status == 200)
        #expect(list.json == [["id": 1, "title": "Buy milk"]])
        let latest = try await MockClient.curl("GET", server.url + "/notes/latest")
        #expect(latest.json == ["latest": true])
        // The body rendered from MSON attributes.
        let note = try await MockClient.curl("GET", server.url + "/notes/7", headers: ["Accept: application/json"])
        #expect(note.status == 200)
        #expect(note.json == ["id": 1, "title": "Buy milk"])
        #expect(note.header("Content-Type") == "application/json")
    }

    @Test func preferAndQueryParametersChooseAResponse() async throws {
        let server = try await MockServer.start(text: notes)
        defer { Task { try await server.stop() } }
        let byHeader = try await MockClient.curl("GET", server.url + "/notes/7", headers: ["Prefer: status=404"])
        #expect(byHeader.status == 404)
        #expect(byHeader.json == ["error": "no such note"])
        let byCode = try await MockClient.curl("GET", server.url + "/notes/7", headers: ["Prefer: code=404"])
        #expect(byCode.status == 404)
        let byQuery = try await MockClient.curl("GET", server.url + "/notes/7?__code=404")
        #expect(byQuery.status == 404)
        let undocumented = try await MockClient.curl("GET", server.url + "/notes/7", headers: ["Prefer: status=418"])
        #expect(undocumented.status == 404)
        #expect(undocumented.header("Content-Type") == "application/problem+json")
        let byExample = try await MockClient.curl(
            "POST", server.url + "/notes", headers: ["Content-Type: application/json", "Prefer: example=Normal"], body: #"{"title":"x"}"#)
        #expect(byExample.status == 201)
        #expect(byExample.json == ["id": 2])
    }

    @Test func acceptNegotiatesAmongResponsesOfOneStatus() async throws {
        let server = try await MockServer.start(text: notes)
        defer { Task { try await server.stop() } }
        let text = try await MockClient.curl("GET", server.url + "/notes/7", headers: ["Accept: text/plain"])
        #expect(text.status == 200)
        #expect(text.body == "Buy milk\n")
        let json = try await MockClient.curl("GET", server.url + "/notes/7", headers: ["Accept: text/plain;q=0.5, application/json"])
        #expect(json.json == ["id": 1, "title": "Buy milk"])
    }

    @Test func aMatchingRequestExampleWins() async throws {
        let server = try await MockServer.start(text: notes)
        defer { Task { try await server.stop() } }
        let urgent = try await MockClient.curl(
            "POST", server.url + "/notes", headers: ["Content-Type: application/json", "X-Priority: high"],
            body: #"{"title": "Call Bob", "urgent": true}"#)
        #expect(urgent.status == 201)
        #expect(urgent.json == ["id": 3, "urgent": true])
        // Without the header, the body matched by the second request's schema (from MSON).
        let normal = try await MockClient.curl(
            "POST", server.url + "/notes", headers: ["Content-Type: application/json"], body: #"{"title": "Walk"}"#)
        #expect(normal.status == 201)
        #expect(normal.json == ["id": 2])
    }

    @Test func invalidRequestGetsTheDescriptionsOwn400() async throws {
        let server = try await MockServer.start(text: notes)
        defer { Task { try await server.stop() } }
        let answer = try await MockClient.curl("POST", server.url + "/notes", headers: ["Content-Type: application/json"], body: #"{"title": 5}"#)
        #expect(answer.status == 400)
        #expect(answer.json == ["error": "title is required"])
    }

    @Test func invalidParametersGet422ProblemWithViolations() async throws {
        let server = try await MockServer.start(text: notes)
        defer { Task { try await server.stop() } }
        let answer = try await MockClient.curl("GET", server.url + "/tags/garden")
        #expect(answer.status == 422)
        #expect(answer.header("Content-Type") == "application/problem+json")
        let problem = try #require(answer.json?.objectValue)
        #expect(problem["status"] == 422)
        #expect(problem["title"] == "Unprocessable Content")
        #expect(problem["type"]?.stringValue?.isEmpty == false)
        #expect(problem["detail"]?.stringValue?.isEmpty == false)
        let violations = try #require(problem["violations"]?.arrayValue)
        #expect(violations.first?["location"] == "path.tag")
        #expect(violations.first?["message"]?.stringValue?.contains("home") == true)
        let number = try await MockClient.curl("GET", server.url + "/notes/abc")
        #expect(number.status == 422)
        #expect(number.json?["violations"]?.arrayValue?.first?["location"] == "path.id")
        let fine = try await MockClient.curl("GET", server.url + "/tags/work")
        #expect(fine.status == 200)
    }

    @Test func noValidateAnswersInvalidRequests() async throws {
        let server = try await MockServer.start(text: notes, configuration: .init(validates: false))
        defer { Task { try await server.stop() } }
        let answer = try await MockClient.curl("GET", server.url + "/tags/garden")
        #expect(answer.status == 200)
    }

    @Test func unknownPathIs404WithClosestRoutesAndWrongMethodIs405() async throws {
        let server = try await MockServer.start(text: notes)
        defer { Task { try await server.stop() } }
        let missing = try await MockClient.curl("GET", server.url + "/note")
        #expect(missing.status == 404)
        #expect(missing.header("Content-Type") == "application/problem+json")
        let closest = try #require(missing.json?["closestRoutes"]?.arrayValue)
        #expect(closest.first?.stringValue?.contains("/notes") == true)
        let wrong = try await MockClient.curl("PATCH", server.url + "/notes/1")
        #expect(wrong.status == 405)
        #expect(wrong.header("Allow") == "GET, DELETE")
    }

    @Test func corsPreflightAndHeaders() async throws {
        let server = try await MockServer.start(text: notes, configuration: .init(cors: true))
        defer { Task { try await server.stop() } }
        let preflight = try await MockClient.curl(
            "OPTIONS", server.url + "/notes",
            headers: ["Origin: http://localhost:5173", "Access-Control-Request-Method: POST", "Access-Control-Request-Headers: content-type"])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "http://localhost:5173")
        #expect(preflight.header("Access-Control-Allow-Methods") == "POST")
        #expect(preflight.header("Access-Control-Allow-Headers") == "content-type")
        let get = try await MockClient.curl("GET", server.url + "/notes", headers: ["Origin: http://localhost:5173"])
        #expect(get.header("Access-Control-Allow-Origin") == "http://localhost:5173")
        let plain = try await MockServer.start(text: notes)
        defer { Task { try await plain.stop() } }
        let without = try await MockClient.curl("GET", plain.url + "/notes", headers: ["Origin: http://localhost:5173"])
        #expect(without.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func flowsAreRecordedIntoTheSink() async throws {
        let collector = CollectingSink()
        let server = try await MockServer.start(text: notes, sink: collector)
        defer { Task { try await server.stop() } }
        _ = try await MockClient.curl("GET", server.url + "/notes/1?__code=404")
        _ = try await MockClient.curl("POST", server.url + "/notes", headers: ["Content-Type: application/json"], body: #"{"title":"A"}"#)
        let flows = collector.flows
        #expect(flows.count == 2)
        #expect(flows.allSatisfy { $0.mode == .mock })
        #expect(flows.first?.request.target == "/notes/1?__code=404")
        #expect(flows.first?.response?.status == 404)
        #expect(String(decoding: flows.last?.request.body.data ?? Data(), as: UTF8.self) == #"{"title":"A"}"#)
        #expect(flows.last?.response?.status == 201)
        #expect(flows.last?.timings.end != nil)
    }

    @Test func docsPageAtRootAndUnderDocs() async throws {
        let server = try await MockServer.start(text: notes)
        defer { Task { try await server.stop() } }
        for path in ["/", "/__docs"] {
            let page = try await MockClient.curl("GET", server.url + path)
            #expect(page.status == 200)
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            for action in server.contract.actions {
                #expect(page.body.contains(MarkupText.escaped(action.name)))
            }
            #expect(page.body.contains("<table class=\"parameters\">"))
            #expect(page.body.contains("curl -i -X POST"))
            #expect(page.body.contains("<span class=\"k\">&quot;title&quot;</span>"))
            #expect(!page.body.contains("<script"))
        }
    }

    @Test func aDescriptionThatDefinesRootKeepsIt() async throws {
        let root = """
        FORMAT: 1A
        # Root API
        ## Home [/]
        ### Home [GET]
        + Response 200 (application/json)

                {"home": true}
        """
        let server = try await MockServer.start(text: root)
        defer { Task { try await server.stop() } }
        let home = try await MockClient.curl("GET", server.url + "/", headers: ["Accept: text/html"])
        #expect(home.json == ["home": true])
        let docs = try await MockClient.curl("GET", server.url + "/__docs")
        #expect(docs.body.contains("Root API"))
    }

    @Test func openAPIFixtureWithAsyncHTTPClient() async throws {
        let server = try await MockServer.start(path: MockClient.fixtures.appendingPathComponent("pets.yaml").path)
        defer { Task { try await server.stop() } }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { Task { try await client.shutdown() } }

        func call(_ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: String? = nil) async throws -> (Int, [(String, String)], String) {
            var request = HTTPClientRequest(url: server.url + path)
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let body { request.body = .bytes(Array(body.utf8), length: .known(Int64(body.utf8.count))) }
            let response = try await client.execute(request, timeout: .seconds(10))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), response.headers.map { ($0.name, $0.value) }, String(buffer: bytes))
        }

        let list = try await call(.GET, "/pets")
        #expect(list.0 == 200)
        #expect((try? JSONValue(parsing: list.2))?.isJSONEqual(to: [["id": 1, "name": "Tom", "kind": "cat"]]) == true, "\(list.2)")
        let csv = try await call(.GET, "/pets", headers: [("Accept", "text/csv")])
        #expect(csv.2.hasPrefix("id,name,kind"))
        // Generated from the schema: default, enum first, format-aware values.
        let pet = try await call(.GET, "/pets/5")
        #expect(pet.0 == 200)
        #expect((try? JSONValue(parsing: pet.2))?.isJSONEqual(to: ["id": 1, "name": "Felix", "kind": "cat", "born": "1970-01-01", "email": "user@example.com"]) == true, "\(pet.2)")
        let mine = try await call(.GET, "/pets/mine")
        #expect((try? JSONValue(parsing: mine.2))?.isJSONEqual(to: ["id": 7, "name": "Mine", "kind": "cat"]) == true, "\(mine.2)")
        let missing = try await call(.GET, "/pets/5", headers: [("Prefer", "example=missing")])
        #expect(missing.0 == 404)
        #expect((try? JSONValue(parsing: missing.2)) == ["message": "no such pet"])
        let badQuery = try await call(.GET, "/pets?limit=500")
        #expect(badQuery.0 == 422)
        let created = try await call(.POST, "/pets", headers: [("Content-Type", "application/json"), ("X-Request-Id", "1")], body: #"{"name":"Rex","kind":"dog"}"#)
        #expect(created.0 == 201)
        let invalid = try await call(.POST, "/pets", headers: [("Content-Type", "application/json")], body: #"{"name":"","kind":"fish"}"#)
        #expect(invalid.0 == 422)
        let problem = try #require(try? JSONValue(parsing: invalid.2))
        let locations = Set(problem["violations"]?.arrayValue?.compactMap { $0["location"]?.stringValue } ?? [])
        #expect(locations.contains("header.X-Request-Id"))
        #expect(locations.contains("body/name"))
        #expect(locations.contains("body/kind"))
        let deleted = try await call(.DELETE, "/pets/5")
        #expect(deleted.0 == 204)
        let wrong = try await call(.PUT, "/pets/5")
        #expect(wrong.0 == 405)
        #expect(wrong.1.first { $0.0.lowercased() == "allow" }?.1 == "GET, DELETE")
    }
}
