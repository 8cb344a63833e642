// OpenAPIKit's default validations, applied where they apply instead of through its validator.
// The validator finds the values to check by encoding the whole document and casting every
// value it meets to each validated type: over a third of reading a large description. The
// same `Validation`s are applied here to the values a walk of the document reaches, so the
// warnings are the same, worded the same; array elements are named by number, so a warning
// about a parameter points at that parameter.
import KagamiContract
import OpenAPIKit

extension OpenAPIContractBuilder {
    /// The warnings of `document.validate(strict: false)` but for those about references,
    /// which `OpenAPIReader.referenceProblems` reports as errors from the document's text.
    func validationWarnings() -> [Annotation] {
        var walk = ValidationWalk(document: document)
        walk.visitDocument()
        return walk.problems.map { problem in
            Annotation(.warning, problem.reason, at: locator.location(of: problem.codingPath.map(\.stringValue)))
        }
    }
}

private struct ValidationWalk {
    let document: OpenAPI.Document
    var problems: [ValidationError] = []

    init(document: OpenAPI.Document) {
        self.document = document
    }

    private mutating func apply<Subject>(_ validation: Validation<Subject>, to subject: Subject, at path: [String]) {
        problems += validation.apply(to: subject, at: path.map { Validator.CodingKey(stringValue: $0) }, in: document)
    }

    mutating func visitDocument() {
        apply(.documentTagNamesAreUnique, to: document, at: [])
        // Its `allServers` is quadratic too, and only named servers (OpenAPI 3.2) can repeat a name.
        if hasNamedServers() { apply(.documentServerNamesAreUnique, to: document, at: []) }
        // OpenAPIKit's check reads the paths through `values`, which is quadratic in their
        // number (its ordered dictionary counts itself for each element): asked only when it
        // will fail, for its wording.
        if !operationIdsAreUnique() { apply(.operationIdsAreUnique, to: document, at: []) }
        visit(servers: document.servers, at: ["servers"])
        for (path, item) in document.paths {
            if case .b(let pathItem) = item { visit(pathItem, at: ["paths", path.rawValue]) }
        }
        for (name, item) in document.webhooks {
            if case .b(let pathItem) = item { visit(pathItem, at: ["webhooks", name]) }
        }
        let components = document.components
        for (key, entry) in components.parameters {
            if case .b(let parameter) = entry { apply(.parameterStyleAndLocationAreCompatible, to: parameter, at: ["components", "parameters", key.rawValue]) }
        }
        for (key, entry) in components.callbacks {
            if case .b(let callbacks) = entry { visit(callbacks, at: ["components", "callbacks", key.rawValue]) }
        }
        for (key, pathItem) in components.pathItems {
            visit(pathItem, at: ["components", "pathItems", key.rawValue])
        }
    }

    private func hasNamedServers() -> Bool {
        if document.servers.contains(where: { $0.name != nil }) { return true }
        func named(_ item: Either<OpenAPI.Reference<OpenAPI.PathItem>, OpenAPI.PathItem>) -> Bool {
            guard let pathItem = document.components[item] else { return false }
            return (pathItem.servers ?? []).contains { $0.name != nil }
                || pathItem.endpoints.contains { ($0.operation.servers ?? []).contains { $0.name != nil } }
        }
        // Iterated, not mapped: OpenAPIKit's ordered dictionary counts itself for each element it maps.
        for (_, item) in document.paths where named(item) { return true }
        for (_, item) in document.webhooks where named(item) { return true }
        return false
    }

    private func operationIdsAreUnique() -> Bool {
        var seen: Set<String> = []
        for (_, item) in document.paths {
            guard let pathItem = document.components[item] else { continue }
            for endpoint in pathItem.endpoints {
                if let id = endpoint.operation.operationId, !seen.insert(id).inserted { return false }
            }
        }
        return true
    }

    private mutating func visit(servers: [OpenAPI.Server], at path: [String]) {
        for (index, server) in servers.enumerated() {
            for (name, variable) in server.variables {
                let variablePath = path + [String(index), "variables", name]
                apply(.serverVariableEnumIsValid, to: variable, at: variablePath)
                apply(.serverVariableDefaultExistsInEnum, to: variable, at: variablePath)
            }
        }
    }

    private mutating func visit(parameters: OpenAPI.Parameter.Array, at path: [String]) {
        for (index, entry) in parameters.enumerated() {
            if case .b(let parameter) = entry { apply(.parameterStyleAndLocationAreCompatible, to: parameter, at: path + [String(index)]) }
        }
    }

    private mutating func visit(_ pathItem: OpenAPI.PathItem, at path: [String]) {
        apply(.pathItemParametersAreUnique, to: pathItem, at: path)
        apply(.querystringParametersAreCompatible, to: pathItem, at: path)
        visit(servers: pathItem.servers ?? [], at: path + ["servers"])
        visit(parameters: pathItem.parameters, at: path + ["parameters"])
        for endpoint in pathItem.endpoints {
            let operationPath: [String]
            switch endpoint.method {
            case .builtin(let method): operationPath = path + [method.rawValue.lowercased()]
            case .other(let method): operationPath = path + ["additionalOperations", method]
            }
            let operation = endpoint.operation
            apply(.operationParametersAreUnique, to: operation, at: operationPath)
            visit(servers: operation.servers ?? [], at: operationPath + ["servers"])
            visit(parameters: operation.parameters, at: operationPath + ["parameters"])
            for (name, entry) in operation.callbacks {
                if case .b(let callbacks) = entry { visit(callbacks, at: operationPath + ["callbacks", name]) }
            }
        }
    }

    private mutating func visit(_ callbacks: OpenAPI.Callbacks, at path: [String]) {
        for (url, entry) in callbacks {
            if case .b(let pathItem) = entry { visit(pathItem, at: path + [url.rawValue]) }
        }
    }
}
