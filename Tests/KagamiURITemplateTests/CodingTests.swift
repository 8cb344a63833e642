import Foundation
import KagamiURITemplate
import Testing

@Suite struct CodingTests {
    struct Route: Codable, Equatable {
        var template: URITemplate
    }

    @Test func templatesEncodeAsTheirText() throws {
        let route = Route(template: try URITemplate("/users/{id}{?fields}"))
        let data = try JSONEncoder().encode(route)
        #expect(String(decoding: data, as: UTF8.self) == #"{"template":"\/users\/{id}{?fields}"}"#)
        #expect(try JSONDecoder().decode(Route.self, from: data) == route)
    }

    @Test func anInvalidTemplateIsADecodingErrorThatSaysWhere() throws {
        do {
            _ = try JSONDecoder().decode(Route.self, from: Data(#"{"template": "/users/{id"}"#.utf8))
            Issue.record("decoded")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription == #"unclosed expression starting at character 8 of "/users/{id""#)
            #expect(context.codingPath.map(\.stringValue) == ["template"])
        }
    }
}
