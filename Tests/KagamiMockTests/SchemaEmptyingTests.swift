import KagamiJSON
import Testing
@testable import KagamiMock

/// The empty state's body as a schema shapes it.
@Suite struct SchemaEmptyingTests {
    func emptied(_ value: JSONValue, schema: String) throws -> JSONValue {
        SchemaEmptying(root: try JSONValue(parsing: schema)).emptied(value)
    }

    @Test func aPageLosesItsItemsItsCountAndItsNextLink() throws {
        let schema = """
            {"type": "object", "properties": {
              "data": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
              "totalCount": {"type": "integer", "minimum": 0},
              "page_size": {"type": "integer"},
              "next_cursor": {"type": ["string", "null"]},
              "nextPage": {"type": "string"}},
             "$defs": {"Item": {"type": "object", "properties": {"tags": {"type": "array"}}}}}
            """
        let page: JSONValue = ["data": [["tags": ["a"]]], "totalCount": 7, "page_size": 20, "next_cursor": "abc", "nextPage": "/p/2"]
        // The page size is not a count; a next link the schema doesn't let be null stays.
        #expect(try emptied(page, schema: schema) == ["data": [], "totalCount": 0, "page_size": 20, "next_cursor": nil, "nextPage": "/p/2"])
    }

    @Test func countsOutsideAPageAndMinimumsAreKept() throws {
        let schema = #"{"type": "object", "properties": {"count": {"type": "integer", "minimum": 1}, "items": {"type": "array"}}}"#
        #expect(try emptied(["count": 4, "items": [1, 2]], schema: schema) == ["count": 1, "items": []])
        // No list in the object: nothing there is a page's count.
        #expect(try emptied(["count": 4], schema: schema) == ["count": 4])
    }

    @Test func minItemsKeepsTheFirstItemsEmptiedInTurn() throws {
        let schema = #"{"type": "array", "minItems": 2, "items": {"type": "object", "properties": {"children": {"type": "array"}}}}"#
        let value: JSONValue = [["children": [1]], ["children": [2]], ["children": [3]]]
        #expect(try emptied(value, schema: schema) == [["children": []], ["children": []]])
    }

    @Test func requiredListsLeftOutOrNullAreGivenEmptyWhenTheSchemaAllows() throws {
        let schema = """
            {"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"nullable": {"type": "array", "nullable": true}}}],
             "required": ["missing", "nulled", "nullable", "atLeastOne"],
             "$defs": {"Base": {"type": "object", "properties": {
               "missing": {"type": "array"}, "nulled": {"type": "array"}, "atLeastOne": {"type": "array", "minItems": 1}}}}}
            """
        #expect(try emptied(["nulled": nil, "nullable": nil], schema: schema) == ["nulled": [], "nullable": nil, "missing": []])
    }

    @Test func branchesLendTheirProperties() throws {
        let schema = """
            {"oneOf": [{"type": "object", "properties": {"hits": {"type": "array"}, "total": {"type": "integer"}}},
                       {"type": "object", "properties": {"error": {"type": "string"}}}]}
            """
        #expect(try emptied(["hits": [1], "total": 1], schema: schema) == ["hits": [], "total": 0])
        #expect(try emptied(["error": "x"], schema: schema) == ["error": "x"])
    }

    /// A schema that refers to itself is followed as deep as an answer usually goes; past
    /// `maximumDepth` levels lists are simply emptied, so any depth ends.
    @Test func aSelfReferencingSchemaEnds() throws {
        let schema = ##"{"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "minItems": 1}}}}}"##
        func tree(_ levels: Int) -> JSONValue {
            var value: JSONValue = ["children": []]
            for _ in 0..<levels { value = ["children": [value, ["children": []]]] }
            return value
        }
        func depth(_ value: JSONValue) -> Int {
            var depth = 0
            var node = value
            while let children = node["children"]?.arrayValue, let first = children.first {
                #expect(children.count == 1)
                node = first
                depth += 1
            }
            return depth
        }
        #expect(depth(try emptied(tree(10), schema: schema)) == 10)
        #expect(depth(try emptied(tree(2_000), schema: schema)) < SchemaEmptying.maximumDepth)
    }
}
