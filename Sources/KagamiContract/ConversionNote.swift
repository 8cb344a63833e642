/// Something of a description that the format it is converted to cannot say, and where it is
/// written in the source: what `kagami convert` lists on standard error.
public struct ConversionNote: Sendable, Hashable, Codable {
    public var message: String
    public var sourceLocation: SourceLocation?

    public init(_ message: String, at location: SourceLocation? = nil) {
        self.message = message
        self.sourceLocation = location
    }
}
