import ArgumentParser
import Foundation
import KagamiContractCheck
import KagamiDiff
import KagamiFlow
import KagamiHAR
import KagamiOutput
import KagamiStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kagami diff BEFORE AFTER`: what changed in an app's API traffic between two captures (two
/// builds, say), operation by operation, for a terminal, a review or CI.
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two captures (sessions or HAR files, or two filters of one session) by operation: calls added or removed, order, statuses, shapes, values, latency and size.",
        discussion: """
            Each capture is a session file or an HTTP Archive (told apart by their content); with --store, the names of two sessions \
            in that database. One capture with --before-filter and --after-filter compares two parts of it. Exchanges are grouped \
            by the operations of --contract, else by path templates inferred from both captures (/users/{userId}). Values that \
            differ between calls, ids, times and tokens are not reported; --ignore names more. Exits 1 when a finding of a kind \
            given to --fail-on occurs, 2 when a capture can't be read, is empty, or has nothing in common with the other. \
            See docs/DIFF.md.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, html, junit
    }

    enum Colour: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    @Argument(help: ArgumentHelp("The capture before and the capture after: session files or HAR files (with --store, session names). One capture with --before-filter/--after-filter compares two parts of it.", valueName: "capture"))
    var captures: [String] = []

    @OptionGroup var source: SessionOptions

    // Unconditional: a filter's first word may be a negation (`-path:/health`).
    @Option(parsing: .unconditional, help: ArgumentHelp("Filter both captures (the web UI's filter words: host:, path:, method:, status:, has:error, text).", valueName: "words"))
    var filter: String?

    @Option(name: .customLong("before-filter"), parsing: .unconditional, help: ArgumentHelp("Filter the before capture.", valueName: "words"))
    var beforeFilter: String?

    @Option(name: .customLong("after-filter"), parsing: .unconditional, help: ArgumentHelp("Filter the after capture.", valueName: "words"))
    var afterFilter: String?

    @Option(help: ArgumentHelp("Group exchanges by the operations of this API description (FILE or FILE=BASEURL).", valueName: "file"))
    var contract: String?

    @Option(help: ArgumentHelp("A JSON Pointer (/meta/requestId, * for any member or element) or a header or query parameter name never to report; repeatable.", valueName: "place"))
    var ignore: [String] = []

    @Option(name: .customLong("fail-on"), help: ArgumentHelp(
        "Exit 1 when a finding of these kinds occurs, comma-separated or repeated (e.g. removed-operation,removed-field,status,slower; any for every kind). Kinds: \(DiffFinding.Kind.allCases.map(\.rawValue).joined(separator: ", ")).",
        valueName: "kinds"))
    var failOn: [String] = []

    @Option(help: "Report format: text (grouped by operation), json (one object per finding), html, junit.")
    var format: Format = .text

    @Option(name: .shortAndLong, help: "Write the report to this file instead of standard output.")
    var output: String?

    @Option(help: "Colour the text report: auto (on a terminal, unless NO_COLOR is set), always, never.")
    var color: Colour = .auto

    @Option(name: .customLong("latency-threshold"), help: ArgumentHelp("Report slower or faster when the median or 95th percentile duration changed by this many percent…", valueName: "percent"))
    var latencyThreshold: Double = 50

    @Option(name: .customLong("latency-minimum"), help: ArgumentHelp("…and by at least this many milliseconds.", valueName: "ms"))
    var latencyMinimum: Double = 50

    @Option(name: .customLong("size-threshold"), help: ArgumentHelp("Report larger or smaller when the median or 95th percentile response body size changed by this many percent…", valueName: "percent"))
    var sizeThreshold: Double = 50

    @Option(name: .customLong("size-minimum"), help: ArgumentHelp("…and by at least this many bytes.", valueName: "bytes"))
    var sizeMinimum: Int = 1024

    @Option(name: .customLong("count-threshold"), help: ArgumentHelp("Report a call count that changed by at least this many percent (0: any change).", valueName: "percent"))
    var countThreshold: Double = 0

    /// The captures named, `--session` first.
    private var named: [String] { (source.session.map { [$0] } ?? []) + captures }

    func validate() throws {
        switch named.count {
        case 1:
            guard beforeFilter != nil || afterFilter != nil else {
                throw ValidationError("give a second capture, or --before-filter and --after-filter to compare two parts of \(named[0])")
            }
            guard (beforeFilter ?? "") != (afterFilter ?? "") else {
                throw ValidationError("--before-filter and --after-filter are the same: the two parts would be one")
            }
        case 2: break
        case 0: throw ValidationError("give the capture before and the capture after (session or HAR files; with --store, session names)")
        default: throw ValidationError("give two captures, not \(named.count)")
        }
        for (option, text) in [("--filter", filter), ("--before-filter", beforeFilter), ("--after-filter", afterFilter)] {
            guard let text else { continue }
            let unapplied = FlowFilter(parsing: text).unapplied
            if !unapplied.isEmpty {
                throw ValidationError("\(option): \(unapplied.joined(separator: " ")) can't select exchanges here; use host:, path:, method:, status:, has:error and text")
            }
        }
        _ = try kinds()
        for (name, value) in [("--latency-threshold", latencyThreshold), ("--latency-minimum", latencyMinimum), ("--size-threshold", sizeThreshold), ("--count-threshold", countThreshold)] where value < 0 {
            throw ValidationError("\(name) can't be negative")
        }
    }

    /// The kinds `--fail-on` names.
    private func kinds() throws -> Set<DiffFinding.Kind> {
        var kinds: Set<DiffFinding.Kind> = []
        for word in failOn.flatMap({ $0.split(separator: ",") }).map({ $0.trimmingCharacters(in: .whitespaces) }) where !word.isEmpty {
            if word == "any" {
                kinds.formUnion(DiffFinding.Kind.allCases)
            } else if let kind = DiffFinding.Kind(rawValue: word) {
                kinds.insert(kind)
            } else {
                throw ValidationError("--fail-on: \(word) is not a kind of finding; the kinds are \(DiffFinding.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        return kinds
    }

    func run() async throws {
        var options = DiffOptions(
            ignore: ignore, latencyRatio: latencyThreshold / 100, latencyMinimum: latencyMinimum / 1000,
            sizeRatio: sizeThreshold / 100, sizeMinimum: sizeMinimum, callCountRatio: countThreshold / 100)
        if let contract {
            do {
                options.contract = try ContractCheck.load(contract)
            } catch {
                throw unusable(error.description)
            }
        }
        let names = named
        let first = try await open(names[0])
        let second = names.count > 1 ? try await open(names[1]) : first
        let filters = (Self.filter(filter, beforeFilter), Self.filter(filter, afterFilter))
        let labels = (Self.label(names[0], [filter, beforeFilter]), Self.label(names.count > 1 ? names[1] : names[0], [filter, afterFilter]))
        let diff: CaptureDiff
        do {
            let options = options
            diff = try await CaptureDiff.comparing(
                { try await first.summary(filter: filters.0, options: options) }, { try await second.summary(filter: filters.1, options: options) },
                labels: labels)
        } catch let refusal as DiffRefusal {
            await Self.close(first, second, same: names.count == 1)
            throw unusable(refusal.description)
        } catch {
            await Self.close(first, second, same: names.count == 1)
            throw unusable("\(error)")
        }
        await Self.close(first, second, same: names.count == 1)

        let report = DiffReport(diff, beforeLabel: labels.0, afterLabel: labels.1, failOn: try kinds())
        let text: String
        switch format {
        case .text:
            let colour = color == .always || (color == .auto && output == nil && isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
            text = report.text(colour: colour)
        case .json: text = report.json().serialized(.prettyPrinted) + "\n"
        case .html: text = report.html()
        case .junit: text = report.junit()
        }
        if let output {
            do {
                try OutputFile.write(Data(text.utf8), to: SessionFile.expand(output), mode: 0o600)
            } catch {
                throw unusable("\(error)")
            }
            Console.error("kagami diff: \(diff.findings.count) finding\(diff.findings.count == 1 ? "" : "s") written to \(output)\n")
        } else {
            try Console.answer(text)
        }
        if report.exitCode != 0 { throw ExitCode(report.exitCode) }
    }

    private static func close(_ first: CaptureSource, _ second: CaptureSource, same: Bool) async {
        await first.close()
        if !same { await second.close() }
    }

    /// Both the shared filter's words and the side's.
    static func filter(_ shared: String?, _ side: String?) -> FlowFilter {
        FlowFilter(parsing: [shared, side].compactMap { $0 }.joined(separator: " "))
    }

    /// `v1.sqlite`, `session.sqlite (path:/v2/*)`.
    static func label(_ name: String, _ filters: [String?]) -> String {
        let words = filters.compactMap { $0 }.filter { !$0.allSatisfy(\.isWhitespace) }.joined(separator: " ")
        return words.isEmpty ? name : "\(name) (\(words))"
    }

    /// Unusable input: the reason on standard error, exit status 2.
    private func unusable(_ message: String) -> ExitCode {
        Console.error("kagami diff: \(message)\n")
        return ExitCode(2)
    }

    /// A capture named on the command line, opened for reading.
    private func open(_ name: String) async throws -> CaptureSource {
        if source.storeURL != nil {
            do {
                return .session(try await RecordingStore.openForReading(store: source.storeURL, session: name))
            } catch {
                throw unusable("\(error)")
            }
        }
        let path = SessionFile.expand(name)
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw unusable(FileManager.default.fileExists(atPath: path) ? "cannot read \(path)" : "no file at \(path)")
        }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        if head.starts(with: Data("SQLite format 3\0".utf8)) {
            // Opened as a store, another SQLite database would get a session's tables.
            guard SQLiteFlowStore.holdsSession(at: path) else {
                throw unusable("\(path) is an SQLite database but not a session file")
            }
            do {
                return .session(try await RecordingStore.openForReading(store: nil, session: name))
            } catch {
                throw unusable("\(error)")
            }
        }
        if head.drop(while: { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }).first == UInt8(ascii: "{") {
            do {
                return .archive(try HARFile.read(name, command: "diff"), path: path)
            } catch {
                throw unusable(error.description)
            }
        }
        throw unusable("\(path) is neither a session file (SQLite) nor an HTTP Archive (HAR, JSON)")
    }
}

/// Where one side's exchanges come from.
enum CaptureSource: Sendable {
    case session(RecordingStore)
    case archive(HARImport.Result, path: String)

    /// The capture's exchanges matching `filter`, read once into a summary: a session a page at
    /// a time (memory holds one page of bodies), an archive from memory.
    func summary(filter: FlowFilter, options: DiffOptions) async throws -> CaptureSummary {
        switch self {
        case .session(let reading):
            return try await Self.summary(of: reading.store, filter: filter, options: options)
        case .archive(let archive, _):
            guard !filter.isEmpty else {
                var summary = CaptureSummary(options: options)
                for flow in archive.flows { summary.add(flow, messages: archive.webSocketMessages[flow.id] ?? []) }
                return summary
            }
            // The store answers filters: the archive goes into a session of its own first, so
            // its words mean exactly what they mean for a session.
            let folder = NSTemporaryDirectory() + "kagami-diff-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let store = try SQLiteFlowStore(path: folder + "/archive.sqlite")
            for flow in archive.flows {
                store.record(flow)
                if let messages = archive.webSocketMessages[flow.id] { store.record(messages: messages, of: flow.id) }
            }
            try await store.flush()
            return try await Self.summary(of: store, filter: filter, options: options)
        }
    }

    private static func summary(of store: any FlowStore, filter: FlowFilter, options: DiffOptions) async throws -> CaptureSummary {
        var summary = CaptureSummary(options: options)
        try await store.flush()
        try await store.forEachFlow(filter: filter, includeBodies: true) { page in
            try await summary.add(page) { try await store.messages(of: $0, offset: 0, limit: nil) }
        }
        return summary
    }

    func close() async {
        if case .session(let reading) = self { try? await reading.close() }
    }
}
