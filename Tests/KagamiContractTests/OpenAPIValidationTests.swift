import Foundation
import KagamiContract
import KagamiOpenAPI
import OpenAPIKit
import Testing

/// The warnings the reader gives are those of OpenAPIKit's validator, though it no longer
/// runs it: the same validations, applied where they apply.
@Suite struct OpenAPIValidationTests {
    /// A document breaking each of the validator's default rules but those about references.
    static let document = """
    {
      "openapi": "3.1.0",
      "info": {"title": "Rules", "version": "1"},
      "tags": [{"name": "notes"}, {"name": "notes"}],
      "servers": [
        {"url": "https://{region}.example.com/{stage}", "variables": {
          "region": {"default": "eu", "enum": []},
          "stage": {"default": "prod", "enum": ["dev", "test"]}
        }}
      ],
      "paths": {
        "/notes": {
          "parameters": [
            {"name": "q", "in": "query", "schema": {"type": "string"}},
            {"name": "q", "in": "query", "schema": {"type": "string"}}
          ],
          "get": {
            "operationId": "notes",
            "parameters": [
              {"name": "page", "in": "query", "style": "matrix", "schema": {"type": "integer"}},
              {"name": "X-Id", "in": "header", "schema": {"type": "string"}},
              {"name": "X-Id", "in": "header", "schema": {"type": "string"}}
            ],
            "responses": {"200": {"description": "ok"}},
            "callbacks": {
              "done": {
                "{$request.body#/url}": {
                  "post": {
                    "parameters": [
                      {"name": "a", "in": "cookie", "style": "deepObject", "schema": {"type": "object"}}
                    ],
                    "responses": {"204": {"description": "ok"}}
                  }
                }
              }
            }
          },
          "post": {
            "operationId": "notes",
            "servers": [{"url": "https://{x}.example.com", "variables": {"x": {"default": "a", "enum": ["b"]}}}],
            "responses": {"201": {"description": "made"}}
          }
        }
      },
      "webhooks": {
        "changed": {
          "post": {
            "parameters": [
              {"name": "v", "in": "path", "required": true, "style": "form", "schema": {"type": "string"}},
              {"name": "v", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {"200": {"description": "ok"}}
          }
        }
      },
      "components": {
        "parameters": {
          "Trace": {"name": "trace", "in": "header", "style": "label", "schema": {"type": "string"}}
        },
        "pathItems": {
          "Shared": {
            "parameters": [
              {"name": "s", "in": "query", "schema": {"type": "string"}},
              {"name": "s", "in": "query", "schema": {"type": "string"}}
            ]
          }
        }
      }
    }
    """

    @Test func warningsAreThoseOfOpenAPIKitsValidator() throws {
        let decoded = try JSONDecoder().decode(OpenAPI.Document.self, from: Data(Self.document.utf8))
        var expected: [String] = []
        do {
            _ = try decoded.validate(strict: false)
        } catch let collection as ValidationErrorCollection {
            expected = collection.values.map(\.reason)
        }
        #expect(expected.count >= 10, "\(expected)")
        let contract = OpenAPIReader.parse(Self.document)
        #expect(contract.errors.isEmpty, "\(contract.errors)")
        #expect(contract.warnings.map(\.message).sorted() == expected.sorted())
    }

    @Test func aParameterWarningPointsAtTheParameter() {
        let contract = OpenAPIReader.parse(Self.document)
        let matrix = contract.warnings.first { $0.message.contains("matrix style") }
        // The `page` parameter is on line 20.
        #expect(matrix?.sourceLocation?.line == 20, "\(contract.warnings)")
        let stage = contract.warnings.first { $0.message.contains("default must exist in enum") && $0.sourceLocation?.line == 8 }
        #expect(stage != nil, "\(contract.warnings)")
    }
}
