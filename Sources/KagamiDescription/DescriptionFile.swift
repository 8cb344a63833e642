// Reads a description file of either format into the contract model.
import Foundation
import KagamiBlueprint
import KagamiContract
import KagamiOpenAPI

/// A description (API Blueprint or OpenAPI) and the contract read from it.
public struct DescriptionFile: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case apiBlueprint = "api-blueprint"
        case openAPI = "openapi"
    }

    public enum ReadError: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "\(path): cannot read the file: \(reason)"
            }
        }
    }

    /// The file the description came from, or a label such as `<string>` for text given directly.
    /// The text itself is not kept: a large description's text is let go once it is parsed.
    public let path: String
    public let format: Format
    public let contract: APIContract

    /// `progress` hears how far reading has got (for a display while a large file is read).
    /// `checksSchemaExamples`: lint's check of the examples an OpenAPI schema writes of itself
    /// (`OpenAPIReader.parse`), its findings among the contract's annotations.
    public init(path: String, checksSchemaExamples: Bool = false, progress: ReadingProgress.Report? = nil) throws(ReadError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .unreadable(path: path, reason: "no such file")
        }
        if isDirectory.boolValue {
            throw .unreadable(path: path, reason: "it is a directory; give the description file (.apib, .md, .yaml, .yml, .json)")
        }
        self.init(text: try Self.text(ofFile: path), path: path, checksSchemaExamples: checksSchemaExamples, progress: progress)
    }

    /// The file's text. Read in a function of its own so that the bytes are let go before the
    /// text is parsed (held to the end of the initialiser, a 60 MB description's bytes were
    /// part of the peak memory of reading it).
    private static func text(ofFile path: String) throws(ReadError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: (error as NSError).localizedFailureReason ?? "permission denied or not a regular file")
        }
        return try text(of: data, path: path)
    }

    /// The file's bytes as text, or why they are not a text description: a NUL byte or bytes
    /// that are not UTF-8. The NUL is looked for with `memchr` and the text validated as it is
    /// made: `Data.firstIndex(of:)` and a `String` made only to be checked took longer than
    /// parsing a 60 MB description.
    static func text(of data: Data, path: String) throws(ReadError) -> String {
        let nul = data.withUnsafeBytes { bytes -> Int? in
            guard let start = bytes.baseAddress, let found = memchr(start, 0, bytes.count) else { return nil }
            return UnsafeRawPointer(found) - start
        }
        if let nul {
            throw .unreadable(path: path, reason: "it is not a text file (a NUL byte at offset \(nul)); a description is UTF-8 text")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw .unreadable(path: path, reason: "it is not UTF-8 text; a description is UTF-8 text")
        }
        return text
    }

    /// Text given directly; the format is detected from `path`'s extension and the text when nil.
    public init(
        text: consuming String, format: Format? = nil, path: String = "<string>", checksSchemaExamples: Bool = false,
        progress: ReadingProgress.Report? = nil
    ) {
        self.path = path
        let format = format ?? (Self.isOpenAPI(path: path, text: text) ? .openAPI : .apiBlueprint)
        self.format = format
        if format == .openAPI {
            contract = OpenAPIReader.parse(consume text, checksSchemaExamples: checksSchemaExamples, progress: progress)
        } else {
            progress?(ReadingProgress(stage: "parsing"))
            contract = BlueprintParser.parse(text)
        }
    }

    /// Errors confined to one example (an invalid body), as warnings saying the example is
    /// used as written: what the mock and convert print before going on.
    public func examplesUsedAsWritten(_ use: String) -> [String] {
        Self.examplesUsedAsWritten(in: contract, path: path, use)
    }

    public static func examplesUsedAsWritten(in contract: APIContract, path: String, _ use: String) -> [String] {
        contract.annotations.filter { $0.severity == .error && !$0.blocksUse }.map { annotation in
            let line = annotation.sourceLocation?.line ?? 1
            let column = annotation.sourceLocation?.column ?? 1
            return "\(path):\(line):\(column): warning: \(annotation.message) (\(use))"
        }
    }

    /// By extension (`.json`, `.yaml`, `.yml`), else by an `openapi` or `swagger` field near the top.
    public static func isOpenAPI(path: String, text: String) -> Bool {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".apib") || lowered.hasSuffix(".md") { return false }
        if lowered.hasSuffix(".json") || lowered.hasSuffix(".yaml") || lowered.hasSuffix(".yml") { return true }
        let head = text.prefix(4096)
        return head.contains("openapi:") || head.contains("\"openapi\"") || head.contains("swagger:") || head.contains("\"swagger\"")
    }

    /// What the contract could not carry (`APIContract.readingNotes`), as
    /// `file:line:col: note: message` lines: what the mock prints as it starts.
    public static func readingNotes(in contract: APIContract, path: String) -> [String] {
        contract.readingNotes.map { note in
            "\(path):\(note.sourceLocation?.line ?? 1):\(note.sourceLocation?.column ?? 1): note: \(note.message)"
        }
    }

    /// One problem or note of a description, where it is written: what lint prints as a line
    /// and what `kagami contract --json` lists under `diagnostics`.
    public struct Diagnostic: Sendable, Hashable {
        public var file: String
        public var line: Int
        public var column: Int
        /// `error`, `warning` or `note`.
        public var severity: String
        public var message: String

        /// `file:line:col: severity: message`, the form editors and CI logs understand.
        public var text: String { "\(file):\(line):\(column): \(severity): \(message)" }
    }

    /// `file:line:col: severity: message`, the form editors and CI logs understand.
    /// Sorted by position, each once. `adding`: problems found beyond the reader's (a URI
    /// template the router cannot compile). `onlyErrors`: the errors that keep a tool from
    /// using the description (not those confined to one example); otherwise the reading's
    /// notes (`APIContract.readingNotes`) too, as `note` lines.
    public func diagnostics(onlyErrors: Bool = false, adding extra: [Annotation] = []) -> [String] {
        diagnosticEntries(onlyErrors: onlyErrors, adding: extra).map(\.text)
    }

    /// `diagnostics(onlyErrors:adding:)` as values.
    public func diagnosticEntries(onlyErrors: Bool = false, adding extra: [Annotation] = []) -> [Diagnostic] {
        var seen: Set<Diagnostic> = []
        let problems = (contract.annotations + extra)
            .filter { !onlyErrors || $0.blocksUse }
            .map { ($0.sourceLocation, $0.severity.rawValue, $0.message) }
        let notes = onlyErrors ? [] : contract.readingNotes.map { ($0.sourceLocation, "note", $0.message) }
        return (problems + notes)
            .enumerated()
            .sorted { lhs, rhs in
                let (l, r) = (lhs.element.0, rhs.element.0)
                let left = (l?.line ?? 1, l?.column ?? 1, lhs.offset)
                let right = (r?.line ?? 1, r?.column ?? 1, rhs.offset)
                return left < right
            }
            .map { _, entry in
                let (location, severity, message) = entry
                return Diagnostic(file: path, line: location?.line ?? 1, column: location?.column ?? 1, severity: severity, message: message)
            }
            .filter { seen.insert($0).inserted }
    }
}
