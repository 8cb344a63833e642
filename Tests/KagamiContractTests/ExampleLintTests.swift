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
    /// one warning, at the component; an `externalValue` is not fetched (no network access):
    /// a note at each says it was not checked.
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
        let warnings = result.lines.filter { $0.contains(": warning: ") }
        #expect(warnings.count == 1 && warnings.first?.contains(":\(20 * 11 + 7):") == true, "\(result.lines)")
        #expect(warnings.first?.contains("at /n: ") == true, "\(result.lines)")
        let notes = result.lines.filter { $0.contains(": note: ") }
        #expect(notes.count == 20, "\(result.lines)")
        let column = "                shared: {$ref: '#/components/examples/Bad'}".count - "shared: {$ref: '#/components/examples/Bad'}".count + "far: {".count + 1
        for (index, note) in notes.enumerated() {
            #expect(note.hasPrefix("\(result.path):\(14 + 11 * index):\(column): note: example 'far' is given as externalValue 'http://127.0.0.1:9/example.json', which is not fetched"), "\(note)")
        }
        #expect(result.lines.count == 21, "\(result.lines)")
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

    /// A schema's own `example` (OpenAPI 3.0 "Schema Object") is checked against that schema,
    /// wherever the schema is written: a component, a property of one, an array's items, a
    /// parameter's or a body's schema. A `$ref` inside it is followed.
    @Test func aSchemasOwnExampleItsSchemaRefusesIsAWarningAtTheExample() throws {
        let yaml = """
        openapi: 3.0.3
        info: {title: T, version: '1'}
        paths:
          /items:
            get:
              parameters:
                - name: size
                  in: query
                  schema: {type: integer, minimum: 1, example: 0}
              responses:
                '200':
                  description: ok
                  content:
                    application/json:
                      schema:
                        type: array
                        items: {type: string, format: date, example: tomorrow}
        components:
          schemas:
            Item:
              type: object
              required: [id, owner]
              properties:
                id: {type: integer, example: seven}
                name: {type: string, example: fine}
                tags:
                  type: array
                  items: {type: string, maxLength: 3, example: long-tag}
                owner: {$ref: '#/components/schemas/User'}
              example: {id: 1, owner: {name: 5}}
            User:
              type: object
              properties:
                name: {type: string}
              nullable: true
              example: null
        """
        let result = try LintTests.lint(yaml, named: "api.yaml")
        #expect(!result.hasErrors, "\(result.lines)")
        #expect(Self.lines(result) == [9, 17, 24, 28, 30], "\(result.lines)")
        let byLine = Dictionary(uniqueKeysWithValues: zip(Self.lines(result), result.lines))
        #expect(byLine[9]?.contains("the example of schema '#/paths/~1items/get/parameters/0/schema' is refused by its schema: ") == true, "\(result.lines)")
        #expect(byLine[9]?.hasSuffix("(minimum)") == true, "\(result.lines)")
        #expect(byLine[17]?.hasSuffix("(format)") == true, "\(result.lines)")
        #expect(byLine[24]?.contains("the example of schema '#/components/schemas/Item/properties/id' is refused by its schema: ") == true, "\(result.lines)")
        #expect(byLine[24]?.hasSuffix("(type)") == true, "\(result.lines)")
        #expect(byLine[28]?.hasSuffix("(maxLength)") == true, "\(result.lines)")
        // Through the `$ref` to User.
        #expect(byLine[30]?.contains("'#/components/schemas/Item' is refused by its schema at /owner/name: ") == true, "\(result.lines)")
        // The column is the `example` key's.
        #expect(byLine[24]?.contains(":24:\("        id: {type: integer, ".count + 1): ") == true, "\(result.lines)")
    }

    /// JSON Schema 2020-12's `examples` (OpenAPI 3.1): each value of the array is checked, the
    /// finding at the value. A schema example is neither a request's nor a response's: a
    /// readOnly or a writeOnly property may be missing, not both.
    @Test func eachOfA31SchemasExamplesIsCheckedInEitherDirection() throws {
        let yaml = """
        openapi: 3.1.0
        info: {title: T, version: '1'}
        paths: {}
        components:
          schemas:
            Count:
              type: [integer, 'null']
              examples:
                - 3
                - null
                - three
            User:
              type: object
              required: [id, name, password]
              properties:
                id: {type: integer, readOnly: true}
                name: {type: string}
                password: {type: string, writeOnly: true}
              examples:
                - {id: 1, name: ada}
                - {name: ada, password: s3cret}
                - {name: ada}
        """
        let result = try LintTests.lint(yaml, named: "api.yaml")
        #expect(Self.lines(result) == [11, 22], "\(result.lines)")
        #expect(result.lines.first?.contains("the example of schema '#/components/schemas/Count' is refused by its schema: ") == true, "\(result.lines)")
        #expect(result.lines.last?.hasSuffix("(required)") == true, "\(result.lines)")
    }

    @Test func schemaExamplesTheirSchemaAcceptsSayNothing() throws {
        let yaml = """
        openapi: 3.0.3
        info: {title: T, version: '1'}
        paths:
          /items/{id}:
            get:
              parameters:
                - {name: id, in: path, required: true, schema: {type: string, format: uuid, example: 0b6f0c3e-1a57-4a0e-9d1c-2f3b4c5d6e7f}}
              responses:
                '200':
                  description: ok
                  content:
                    application/json:
                      schema: {$ref: '#/components/schemas/Item'}
        components:
          schemas:
            Item:
              type: object
              required: [id]
              properties:
                id: {type: integer, readOnly: true, example: 1}
                price: {type: number, minimum: 0, example: 12.5}
                note: {type: string, nullable: true, example: null}
                parts: {type: array, items: {$ref: '#/components/schemas/Item'}, example: [{id: 2}]}
              example: {id: 1, parts: [{id: 2, parts: []}]}
        """
        let result = try LintTests.lint(yaml, named: "api.yaml")
        #expect(result.lines == ["\(result.path): no problems found"], "\(result.lines)")
    }

    @Test func swagger20SchemaExamplesAreCheckedAtTheir20Lines() throws {
        let yaml = """
        swagger: '2.0'
        info: {title: T, version: '1'}
        paths:
          /items:
            get:
              produces: [application/json]
              responses:
                '200':
                  description: ok
                  schema:
                    type: array
                    items: {type: integer, example: many}
        definitions:
          Item:
            type: object
            properties:
              name: {type: string, example: 7}
              size: {type: integer, example: 3}
        """
        let result = try LintTests.lint(yaml, named: "swagger.yaml")
        #expect(!result.hasErrors, "\(result.lines)")
        let warnings = result.lines.filter { $0.contains(" is refused by its schema") }
        #expect(warnings.map { Int($0.dropFirst(result.path.count + 1).prefix { $0 != ":" }) ?? 0 } == [12, 17], "\(result.lines)")
        #expect(warnings.last?.contains("the example of schema '#/definitions/Item/properties/name' ") == true, "\(result.lines)")
    }
}
