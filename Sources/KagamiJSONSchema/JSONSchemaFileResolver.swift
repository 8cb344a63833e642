import Foundation
import KagamiJSON

/// Serves `file:` URIs from disk, so that a schema file can `$ref` its neighbours
/// (`"$ref": "common.json#/$defs/money"`). Other schemes are not served: nothing goes
/// to the network.
public struct JSONSchemaFileResolver: JSONSchemaResolver {
    /// Files outside this directory are not served.
    public var root: URL

    public init(root: URL) {
        self.root = root.standardizedFileURL
    }

    /// The base URI for a schema read from `file`.
    public static func baseURI(for file: URL) -> String {
        file.standardizedFileURL.absoluteString
    }

    public func schemaDocument(at uri: String) throws -> JSONValue? {
        guard let url = URL(string: uri), url.isFileURL else { return nil }
        let file = url.standardizedFileURL
        guard file.path.hasPrefix(root.path.hasSuffix("/") ? root.path : root.path + "/") else { return nil }
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        do {
            return try JSONValue(parsing: data)
        } catch {
            throw JSONSchemaFileError(path: file.path, error: error)
        }
    }
}

/// A schema file that is not valid JSON, with the place of the syntax error.
public struct JSONSchemaFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var error: JSONParseError

    public var description: String { "\(path):\(error.line):\(error.column): \(error.message)" }
}
