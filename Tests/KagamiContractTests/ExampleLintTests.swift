import Testing

/// `kagami lint` warns of every example the document writes that the schema beside it refuses
/// (OpenAPI 3.x "Media Type Object", "Parameter Object", "Example Object"; Swagger 2.0's
/// `examples` and `x-example`), at the example, with where in it the value fails and why.
@Suite struct ExampleLintTests {
    /// The line of each finding, in order.
    static func lines(_ result: (path: String, lines: [String], hasErrors: Bool)) -> [Int] {
        result.lines.map { Int($0.dropFirst(result.path.count + 1).prefix { $0 != ":" }) ?? 0 }
    }

    @Test func bodyAndParameterExamplesTheirSchemaRefusesAreWarningsAtTheExample() throws {
        let yaml = """
        openapi: 3.0.3
        info: {title: T, version: '1'}
        paths:
          /items/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: integer}, example: seven}
            put:
              parameters:
                - {name: limit, in: query, schema: {type: integer, maximum: 10}, example: 50}
                - name: X-Trace
                  in: header
                  schema: {type: string, format: uuid}
                  examples:
                    bad: {value: not-a-uuid}
                - {name: session, in: cookie, schema: {type: string, minLength: 4}, example: ab}
                - name: filter
                  in: query
                  content:
                    application/json:
                      schema: {type: object, properties: {size: {type: integer}}}
                      example: {size: big}
              requestBody:
                content:
                  application/json:
                    schema: {$ref: '#/components/schemas/Item'}
                    example: {id: 1, name: 5}
              responses:
                '200':
                  description: ok
                  content:
                    application/json:
                      schema: {$ref: '#/components/schemas/Item'}
                      examples:
                        fine: {value: {id: 1, name: a}}
                        wrong: {value: {id: x, name: a}}
                        shared: {$ref: '#/components/examples/NoName'}
        components:
          schemas:
            Item:
              type: object
              required: [id, name]
              properties:
                id: {type: integer}
                name: {type: string}
          examples:
            NoName:
              summary: an item without its name
              value: {id: 3}
        """
        let result = try LintTests.lint(yaml, named: "api.yaml")
        #expect(!result.hasErrors, "\(result.lines)")
        // id's `example`; limit's; X-Trace's first `examples` value; session's; filter's
        // content example; the request body's example; the 200's `wrong` value; NoName's value
        // in components.
        #expect(Self.lines(result) == [6, 9, 14, 15, 21, 26, 35, 48], "\(result.lines)")
        #expect(result.lines.allSatisfy { $0.contains(": warning: ") && $0.contains(" is refused by its schema") }, "\(result.lines)")
        let byLine = Dictionary(uniqueKeysWithValues: zip(Self.lines(result), result.lines))
        #expect(byLine[6]?.contains("the example of path parameter 'id' is refused by its schema: ") == true, "\(result.lines)")
        #expect(byLine[6]?.hasSuffix("(type)") == true, "\(result.lines)")
        #expect(byLine[9]?.contains("query parameter 'limit'") == true && byLine[9]?.hasSuffix("(maximum)") == true, "\(result.lines)")
        #expect(byLine[14]?.contains("header parameter 'X-Trace'") == true && byLine[14]?.hasSuffix("(format)") == true, "\(result.lines)")
        #expect(byLine[15]?.contains("cookie parameter 'session'") == true && byLine[15]?.hasSuffix("(minLength)") == true, "\(result.lines)")
        #expect(byLine[21]?.contains("query parameter 'filter' is refused by its schema at /size: ") == true, "\(result.lines)")
        #expect(byLine[26]?.contains("the example of the request body (application/json) is refused by its schema at /name: ") == true, "\(result.lines)")
        #expect(byLine[35]?.contains("the example of the 200 response's body (application/json) is refused by its schema at /id: ") == true, "\(result.lines)")
        #expect(byLine[48]?.hasSuffix("(required)") == true, "\(result.lines)")
        // The column is the example's key, as for every member the document writes.
        #expect(byLine[26]?.contains(":26:\("            ".count + 1): ") == true, "\(result.lines)")
    }

    @Test func examplesTheirSchemaAcceptsSayNothing() throws {
        let yaml = """
        openapi: 3.1.0
        info: {title: T, version: '1'}
        paths:
          /items:
            get:
              parameters:
                - {name: tags, in: query, schema: {type: array, items: {type: integer}}, example: [1, 2]}
                - {name: q, in: query, schema: {type: string}, example: '5'}
                - {name: when, in: query, schema: {type: string, format: date}, example: '2026-11-29'}
              responses:
                '200':
                  description: ok
                  content:
                    application/json:
                      schema:
                        type: array
                        items: {type: object, properties: {id: {type: integer}, at: {type: [string, 'null']}}}
                      examples:
                        one: {value: [{id: 1, at: null}, {id: 2, at: now}]}
                    text/plain:
                      schema: {type: integer}
                      example: not JSON and not checked
        """
        let result = try LintTests.lint(yaml, named: "api.yaml")
        #expect(result.lines == ["\(result.path): no problems found"], "\(result.lines)")
    }

    /// OpenAPI: a readOnly property is not required in a request, a writeOnly one not in a
    /// response; each is required in the other direction.
    @Test func readOnlyAndWriteOnlyAreReadByTheDirectionOfTheExample() throws {
        let yaml = """
        openapi: 3.0.3
        info: {title: T, version: '1'}
        paths:
          /users:
            post:
              requestBody:
                content:
                  application/json:
                    schema: {$ref: '#/components/schemas/User'}
                    examples:
                      good: {value: {name: ada, password: s3cret}}
                      bad: {value: {name: ada}}
              responses:
                '201':
                  description: created
                  content:
                    application/json:
                      schema: {$ref: '#/components/schemas/User'}
                      examples:
                        good: {value: {id: 1, name: ada}}
                        bad: {value: {name: ada, password: s3cret}}
        components:
          schemas:
            User:
              type: object
              required: [id, name, password]
              properties:
                id: {type: integer, readOnly: true}
                name: {type: string}
                password: {type: string, writeOnly: true}
        """
        let result = try LintTests.lint(yaml, named: "api.yaml")
        #expect(Self.lines(result) == [12, 21], "\(result.lines)")
        #expect(result.lines.first?.contains("request body") == true && result.lines.first?.contains("password") == true, "\(result.lines)")
        #expect(result.lines.last?.contains("201 response") == true && result.lines.last?.contains("\"id\"") == true, "\(result.lines)")
    }

    /// An example in `components/examples` used by many operations under the same schema is
    /// one warning, at the component; an `externalValue` is not fetched (nothing to check).
    @Test func aSharedExampleIsOneWarningAndAnExternalValueIsNotFetched() throws {
        var yaml = """
        openapi: 3.0.3
        info: {title: T, version: '1'}
        paths:

        """
        for index in 0..<20 {
            yaml += """
              /p\(index):
                get:
                  responses:
                    '200':
                      description: ok
                      content:
                        application/json:
                          schema: {type: object, properties: {n: {type: integer}}}
                          examples:
                            shared: {$ref: '#/components/examples/Bad'}
                            far: {externalValue: 'http://127.0.0.1:9/example.json'}

            """
        }
        yaml += """
        components:
          examples:
            Bad:
              value: {n: one}
        """
        let result = try LintTests.lint(yaml, named: "api.yaml")
        #expect(!result.hasErrors, "\(result.lines)")
        #expect(Self.lines(result) == [20 * 11 + 7], "\(result.lines)")
        #expect(result.lines.first?.contains("at /n: ") == true, "\(result.lines)")
    }

    @Test func swagger20ExamplesAreCheckedAtTheir20Lines() throws {
        let yaml = """
        swagger: '2.0'
        info: {title: T, version: '1'}
        consumes: [application/json]
        produces: [application/json]
        paths:
          /items:
            post:
              parameters:
                - {name: limit, in: query, type: integer, x-example: many}
                - name: body
                  in: body
                  schema: {$ref: '#/definitions/Item'}
                  x-examples:
                    application/json: {name: 7}
              responses:
                '201':
                  description: ok
                  schema: {$ref: '#/definitions/Item'}
                  examples:
                    application/json: {name: [a]}
                '200':
                  description: fine
                  schema: {$ref: '#/definitions/Item'}
                  examples:
                    application/json: {name: a}
        definitions:
          Item:
            type: object
            required: [name]
            properties:
              name: {type: string}
        """
        let result = try LintTests.lint(yaml, named: "swagger.yaml")
        #expect(!result.hasErrors, "\(result.lines)")
        let warnings = result.lines.filter { $0.contains(" is refused by its schema") }
        #expect(warnings.map { Int($0.dropFirst(result.path.count + 1).prefix { $0 != ":" }) ?? 0 } == [9, 14, 20], "\(result.lines)")
        #expect(warnings.first?.contains("query parameter 'limit'") == true, "\(result.lines)")
        #expect(warnings.last?.contains("201 response") == true && warnings.last?.contains("at /name: ") == true, "\(result.lines)")
    }
}
