// The mock on Swagger 2.0 descriptions: the base path, bodies from the responses' examples and
// schemas, multipart forms with a file, urlencoded forms and query arrays; curl is the client.
import Foundation
import KagamiJSON
@testable import KagamiMock
import KagamiTesting
import Testing

@Suite struct SwaggerMockTests {
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("KagamiContractTests/Fixtures/\(name)").path
    }

    @Test func petstoreAnswersFromItsExamplesAndSchemas() async throws {
        let server = try await MockServer.start(path: Self.fixture("petstore-2.0.json"))
        defer { Task { try await server.stop() } }
        #expect(server.contract.format == .swagger20)
        let pets = try await MockClient.curl("GET", server.url + "/api/pets?tags=dog,cat&limit=10")
        #expect(pets.status == 200, "\(pets.body)")
        #expect(pets.json?[0]?["name"] == "Rex", "\(pets.body)")
        #expect(pets.header("X-Rate-Limit-Limit").flatMap { Int($0) } != nil, "\(pets.headers)")
        let tooMany = try await MockClient.curl("GET", server.url + "/api/pets?limit=500")
        #expect(tooMany.status == 422)
        // The default response, `#/responses/UnexpectedError`, with the refusal's status.
        #expect(tooMany.json?["message"]?.stringValue != nil, "\(tooMany.body)")
        let pet = try await MockClient.curl("GET", server.url + "/api/pets/7")
        #expect(pet.status == 200)
        #expect(pet.json?["id"]?.intValue != nil && pet.json?["name"]?.stringValue != nil, "\(pet.body)")
        let notANumber = try await MockClient.curl("GET", server.url + "/api/pets/seven")
        #expect(notANumber.status == 422, "\(notANumber.body)")
        let added = try await MockClient.curl(
            "POST", server.url + "/api/pets", headers: ["Content-Type: application/json"], body: #"{"name": "Tom", "tag": null}"#)
        #expect(added.status == 200, "\(added.body)")
        let nameless = try await MockClient.curl(
            "POST", server.url + "/api/pets", headers: ["Content-Type: application/json"], body: #"{"tag": "cat"}"#)
        #expect(nameless.status == 422, "\(nameless.body)")
        let gone = try await MockClient.curl("DELETE", server.url + "/api/pets/7")
        #expect(gone.status == 204)
    }

    /// `kagami mock` as a user runs it on a 2.0 file: what 3.0 cannot hold named on standard
    /// error at its line, the API served under the base path.
    @Test func theCommandNamesWhatItCannotCarryAndServes() async throws {
        let path = Self.fixture("uploads-2.0.yaml")
        let folder = try TemporaryFolder.make("swagger-mock")
        let log = folder.appendingPathComponent("stderr.txt").path
        let mock = try await KagamiProcess.start(
            ["mock", path, "--port", "0", "--session", folder.appendingPathComponent("s.sqlite").path], stderr: .file(log))
        defer { mock.stop() }
        let listed = try await MockClient.curl("GET", "http://127.0.0.1:\(mock.port)/v2/pets?ids=3")
        #expect(listed.status == 200, "\(listed.body)")
        #expect(listed.header("X-Total").flatMap { Int($0) } != nil, "\(listed.headers)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let line = text.components(separatedBy: "\n").firstIndex { $0.contains("collectionFormat: tsv") }.map { $0 + 1 } ?? 0
        let notes = try String(contentsOfFile: log, encoding: .utf8)
        #expect(notes.contains("\(path):\(line):"), "\(notes)")
        #expect(notes.contains("note: collectionFormat 'tsv' of a query parameter"), "\(notes)")
    }

    @Test func formsWithAFileAndQueryArrays() async throws {
        let server = try await MockServer.start(path: Self.fixture("uploads-2.0.yaml"))
        defer { Task { try await server.stop() } }
        let folder = try TemporaryFolder.make("swagger-upload")
        let photo = folder.appendingPathComponent("photo.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]).write(to: photo)
        let uploaded = try await MockClient.curl(
            "POST", server.url + "/v2/pets/3/photos", options: ["-F", "caption=At the beach", "-F", "file=@\(photo.path);type=image/jpeg"])
        #expect(uploaded.status == 201, "\(uploaded.body)")
        #expect(uploaded.json?["url"] == "/photos/1.jpg", "\(uploaded.body)")
        let noFile = try await MockClient.curl("POST", server.url + "/v2/pets/3/photos", options: ["-F", "caption=Alone"])
        #expect(noFile.status == 422, "\(noFile.body)")
        let longCaption = try await MockClient.curl(
            "POST", server.url + "/v2/pets/3/photos",
            options: ["-F", "caption=\(String(repeating: "x", count: 41))", "-F", "file=@\(photo.path)"])
        #expect(longCaption.status == 422, "\(longCaption.body)")

        let updated = try await MockClient.curl(
            "PUT", server.url + "/v2/pets/3", headers: ["Content-Type: application/x-www-form-urlencoded"], body: "name=Rex&status=sold&status=available")
        #expect(updated.status == 200, "\(updated.body)")
        let badStatus = try await MockClient.curl(
            "PUT", server.url + "/v2/pets/3", headers: ["Content-Type: application/x-www-form-urlencoded"], body: "status=lost")
        #expect(badStatus.status == 422, "\(badStatus.body)")

        // csv and multi query arrays, each item checked against the items' type.
        let listed = try await MockClient.curl("GET", server.url + "/v2/pets?ids=1,2&tags=a&tags=b")
        #expect(listed.status == 200, "\(listed.body)")
        #expect(listed.json?.arrayValue != nil, "\(listed.body)")
        let badID = try await MockClient.curl("GET", server.url + "/v2/pets?ids=1,two")
        #expect(badID.status == 422, "\(badID.body)")
        // pipes and ssv: the items between their delimiters.
        let delimited = try await MockClient.curl("GET", server.url + "/v2/pets?colors=red%7Cblue&sizes=1%202")
        #expect(delimited.status == 200, "\(delimited.body)")
        let badColor = try await MockClient.curl("GET", server.url + "/v2/pets?colors=red%7Cgreen")
        #expect(badColor.status == 422, "\(badColor.body)")
        let badSize = try await MockClient.curl("GET", server.url + "/v2/pets?sizes=1+x")
        #expect(badSize.status == 422, "\(badSize.body)")
    }
}
