/// Why an archive was refused: where in the file (line and column when the JSON itself is
/// broken, the JSON path of the member otherwise) and what was expected there.
public struct HARImportError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String?
    /// e.g. `log.entries[3].request.headers[0].value`; nil when the JSON could not be read.
    public var path: String?
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(file: String? = nil, path: String? = nil, line: Int? = nil, column: Int? = nil, message: String) {
        self.file = file
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        var location: [String] = []
        if let file { location.append(file) }
        if let line, let column { location.append("line \(line), column \(column)") }
        if let path { location.append(path) }
        return (location + [message]).joined(separator: ": ")
    }
}
