// Reads a description file of either format into the contract model.
import ArgumentParser
import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiOpenAPI

/// A description file on disk and the contract read from it.
struct DescriptionFile {
    enum ReadError: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)

        var description: String {
            switch self {
            case .unreadable(let path, let reason): "\(path): cannot read the file: \(reason)"
            }
        }
    }

    let path: String
    let contract: APIContract

    init(path: String) throws(ReadError) {
        self.path = path
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: error.localizedDescription)
        }
        let text = String(decoding: data, as: UTF8.self)
        contract = Self.isOpenAPI(path: path, text: text) ? OpenAPIReader.parse(text) : BlueprintParser.parse(text)
    }

    /// By extension (`.json`, `.yaml`, `.yml`), else by an `openapi` field near the top.
    static func isOpenAPI(path: String, text: String) -> Bool {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".apib") || lowered.hasSuffix(".md") { return false }
        if lowered.hasSuffix(".json") || lowered.hasSuffix(".yaml") || lowered.hasSuffix(".yml") { return true }
        let head = text.prefix(4096)
        return head.contains("openapi:") || head.contains("\"openapi\"")
    }

    /// The file read, or the reason it can't be on standard error and exit status 2.
    static func readOrExit(path: String) throws -> DescriptionFile {
        do {
            return try DescriptionFile(path: path)
        } catch {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            throw ExitCode(2)
        }
    }

    /// `file:line:col: severity: message`, the form editors and CI logs understand.
    func diagnostics() -> [String] {
        contract.annotations.map { annotation in
            let line = annotation.sourceLocation?.line ?? 1
            let column = annotation.sourceLocation?.column ?? 1
            return "\(path):\(line):\(column): \(annotation.severity.rawValue): \(annotation.message)"
        }
    }
}
