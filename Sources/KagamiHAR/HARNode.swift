import KagamiJSON

/// A value inside an archive being read, with its JSON path, so every complaint names the
/// member it is about.
struct HARNode {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, path: String) {
        self.value = value
        self.path = path
    }

    func error(_ message: String) -> HARImportError {
        HARImportError(path: path.isEmpty ? "(root)" : path, message: message)
    }

    private func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// A member HAR requires.
    func member(_ key: String) throws(HARImportError) -> HARNode {
        let object = try self.object()
        guard let child = object[key] else {
            throw HARImportError(path: childPath(key), message: "missing; HAR 1.2 requires it")
        }
        return HARNode(child, path: childPath(key))
    }

    /// A member HAR makes optional (or that tools are known to leave out); null counts as absent.
    func optional(_ key: String) throws(HARImportError) -> HARNode? {
        guard let child = try object()[key], !child.isNull else { return nil }
        return HARNode(child, path: childPath(key))
    }

    func object() throws(HARImportError) -> JSONObject {
        guard let object = value.objectValue else { throw mismatch("an object") }
        return object
    }

    func array() throws(HARImportError) -> [HARNode] {
        guard let array = value.arrayValue else { throw mismatch("an array") }
        return array.enumerated().map { HARNode($1, path: "\(path)[\($0)]") }
    }

    func string() throws(HARImportError) -> String {
        guard let string = value.stringValue else { throw mismatch("a string") }
        return string
    }

    func number() throws(HARImportError) -> Double {
        guard let number = value.doubleValue else { throw mismatch("a number") }
        return number
    }

    func integer() throws(HARImportError) -> Int {
        guard let number = value.intValue else { throw mismatch("an integer") }
        return number
    }

    func bool() throws(HARImportError) -> Bool {
        guard let bool = value.boolValue else { throw mismatch("true or false") }
        return bool
    }

    private func mismatch(_ expected: String) -> HARImportError {
        let found = switch value {
        case .integer, .number: "number"
        case .null: "null"
        case .bool: "boolean"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
        return error("expected \(expected), found \(found)")
    }
}
