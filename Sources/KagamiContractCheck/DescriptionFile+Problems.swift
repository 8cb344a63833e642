// The one list of a description's problems: what `kagami lint` prints is what keeps the mock
// and the contract check from using the description.
import KagamiContract
import KagamiDescription

extension DescriptionFile {
    /// `file:line:column: severity: message` lines, sorted by position, each once: the reader's
    /// annotations, the URI templates `routes` could not compile, and (unless `onlyErrors`)
    /// the response headers whose example their own schema refuses.
    public func problems(routes: OperationRoutes, onlyErrors: Bool = false) -> [String] {
        diagnostics(onlyErrors: onlyErrors, adding: routes.templateErrors + (onlyErrors ? [] : Self.headerExampleProblems(routes)))
    }

    /// A warning at each response header's example (its `example`, or the first of its
    /// `examples`) that the header's schema refuses: the mock would send that value, and the
    /// contract check would then report the mock's own answer. Examples written from the
    /// schema are not looked at.
    static func headerExampleProblems(_ routes: OperationRoutes) -> [Annotation] {
        var problems: [Annotation] = []
        for route in routes.routes {
            for example in route.action.examples {
                for response in example.responses {
                    for header in response.declaredHeaders {
                        guard let location = header.exampleLocation, let schema = route.headerSchema(header),
                              let line = response.payload.header(header.name) else { continue }
                        guard let value = header.value(of: line) else {
                            problems.append(Annotation(.warning, "the example of response header '\(header.name)' is not JSON, as its \(header.mediaType ?? "") content says", at: location))
                            continue
                        }
                        guard let error = schema.validate(value).errors.first else { continue }
                        let place = error.instanceLocation.isEmpty ? "" : " at \(error.instanceLocation)"
                        problems.append(Annotation(
                            .warning, "the example of response header '\(header.name)' is refused by its schema\(place): \(error.message)", at: location))
                    }
                }
            }
        }
        return problems
    }
}
