// The one list of a description's problems: what `kagami lint` prints is what keeps the mock
// and the contract check from using the description.
import KagamiContract
import KagamiDescription

extension DescriptionFile {
    /// `file:line:column: severity: message` lines, sorted by position, each once: the reader's
    /// annotations and the URI templates `routes` could not compile.
    public func problems(routes: OperationRoutes, onlyErrors: Bool = false) -> [String] {
        diagnostics(onlyErrors: onlyErrors, adding: routes.templateErrors)
    }
}
