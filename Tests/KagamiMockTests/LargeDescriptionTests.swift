import Foundation
import KagamiContract
import KagamiContractCheck
import KagamiDescription
import KagamiJSON
@testable import KagamiMock
import Testing

/// A description of hundreds of paths (as `bench/descriptions/gen_big_openapi.py` makes, in
/// small) is read whole, with every operation where it is written, and served. Speed is
/// measured by `bench/descriptions/run.sh` on 27,000 paths, not here.
@Suite struct LargeDescriptionTests {
    static let modules = 200

    /// Per module: a collection (GET with query parameters, POST with a body) and an item
    /// (GET, DELETE) path, their schemas referring to shared components.
    static func document(modules: Int) -> String {
        var lines = [
            "openapi: 3.0.3",
            "info: {title: Large, version: '1'}",
            "paths:",
        ]
        for i in 0..<modules {
            lines += [
                "  /m\(i)/items:",
                "    get:",
                "      operationId: list\(i)",
                "      tags: [group\(i / 50)]",
                "      parameters:",
                "        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 100}}",
                "      responses:",
                "        '200':",
                "          description: a page",
                "          content:",
                "            application/json:",
                "              schema: {type: array, items: {$ref: '#/components/schemas/Item\(i)'}}",
                "    post:",
                "      operationId: create\(i)",
                "      requestBody:",
                "        content:",
                "          application/json:",
                "            schema: {$ref: '#/components/schemas/Item\(i)'}",
                "      responses:",
                "        '201': {description: created}",
                "        '422':",
                "          description: invalid",
                "          content:",
                "            application/json:",
                "              schema: {$ref: '#/components/schemas/Error'}",
                "  /m\(i)/items/{id}:",
                "    parameters:",
                "      - {name: id, in: path, required: true, schema: {type: string}}",
                "    get:",
                "      operationId: get\(i)",
                "      responses:",
                "        '200':",
                "          description: the item",
                "          content:",
                "            application/json:",
                "              schema: {$ref: '#/components/schemas/Item\(i)'}",
                "              example: {name: item-\(i), price: {amount: \(i), currency: EUR}, amount: \(i), currency: EUR}",
                "        '404': {description: none}",
                "    delete:",
                "      operationId: delete\(i)",
                "      responses:",
                "        '204': {description: deleted}",
            ]
        }
        lines += [
            "components:",
            "  schemas:",
            "    Money:",
            "      type: object",
            "      required: [amount, currency]",
            "      properties: {amount: {type: number}, currency: {type: string, enum: [EUR, USD]}}",
            "    Error: {type: object, properties: {message: {type: string}}}",
        ]
        for i in 0..<modules {
            lines += [
                "    Item\(i):",
                "      allOf:",
                "        - {$ref: '#/components/schemas/Money'}",
                "        - type: object",
                "          required: [name, price]",
                "          properties: {name: {type: string}, price: {$ref: '#/components/schemas/Money'}}",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func everyOperationIsReadWhereItIsWrittenAndLintFindsNothing() throws {
        let text = Self.document(modules: Self.modules)
        let description = DescriptionFile(text: text, format: .openAPI, path: "large.yaml")
        let contract = description.contract
        #expect(contract.actions.count == 4 * Self.modules)
        // Resources are grouped by an operation's first tag: the collection's GET is tagged, its POST and
        // the item's operations are not.
        #expect(contract.resources.count == 3 * Self.modules)
        #expect(contract.dataStructures.count == Self.modules + 2)
        let routes = OperationRoutes(contract: contract)
        #expect(routes.routes.count == 4 * Self.modules)
        #expect(description.problems(routes: routes).isEmpty, "\(description.problems(routes: routes).prefix(5))")
        // Positions come from where the parser read each key: the last operation's is the line
        // of its `delete:`, the last path's parameters each on their own line.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let last = try #require(contract.actions.last { $0.name == "delete\(Self.modules - 1)" })
        let line = try #require(last.sourceLocation?.line)
        #expect(lines[line - 1] == "    delete:")
        let get = try #require(contract.actions.first { $0.name == "get\(Self.modules - 1)" })
        let notFound = try #require(get.examples.first?.responses.first { $0.status == 404 })
        let notFoundLine = try #require(notFound.payload.sourceLocation?.line)
        #expect(lines[notFoundLine - 1].hasPrefix("        '404'"), "\(lines[notFoundLine - 1])")
    }

    @Test func theMockAnswersRoutesFromAllOverTheDescription() async throws {
        let server = try await MockServer.start(
            text: Self.document(modules: Self.modules), format: .openAPI, configuration: .init(reloadInterval: nil))
        defer { Task { try? await server.stop() } }
        #expect(server.contract.actions.count == 4 * Self.modules)
        for module in [0, Self.modules / 2, Self.modules - 1] {
            let item = await server.respond(to: MockRequest(method: "GET", target: "/m\(module)/items/abc"))
            #expect(item.status == 200)
            let body = try JSONValue(parsing: item.body)
            #expect(body["name"]?.stringValue == "item-\(module)")
            // The request body is checked against the component schema, compiled when first used.
            let invalid = await server.respond(to: MockRequest(
                method: "POST", target: "/m\(module)/items", headers: [("Content-Type", "application/json")], body: Array(#"{"name": 1}"#.utf8)))
            #expect(invalid.status == 422)
            let created = await server.respond(to: MockRequest(
                method: "POST", target: "/m\(module)/items", headers: [("Content-Type", "application/json")],
                body: Array(#"{"name": "a", "price": {"amount": 1, "currency": "EUR"}, "amount": 1, "currency": "EUR"}"#.utf8)))
            #expect(created.status == 201)
            #expect(await server.respond(to: MockRequest(method: "DELETE", target: "/m\(module)/items/abc")).status == 204)
        }
        #expect(await server.respond(to: MockRequest(method: "GET", target: "/m\(Self.modules)/items")).status == 404)
    }
}
