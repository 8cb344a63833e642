import ArgumentParser
import Foundation
import KagamiFlow
import KagamiHAR
import KagamiInfer
import KagamiOutput

/// `kagami infer`: drafts an API description from recorded exchanges.
struct InferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Draft an OpenAPI 3.1 or API Blueprint description from a session's or HAR file's exchanges.",
        discussion: """
        Paths become URI templates (ids, UUIDs, dates and emails become variables named after the segment before them), \
        bodies of each operation are merged into one schema (required only when in every sample), and every status seen \
        is described with one real example, secrets redacted. What could not be described is listed on standard error. \
        Run it again with other --path hints to re-infer from the same traffic.
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case openapi
        case apib
    }

    @OptionGroup var source: SessionOptions

    @Option(help: "HTTP Archive (HAR) to read.")
    var har: String?

    @Option(help: ArgumentHelp("Describe only exchanges with this host (host or host:port); repeatable.", valueName: "host"))
    var host: [String] = []

    @Option(help: "Output format: openapi (3.1, YAML) or apib (API Blueprint with MSON).")
    var format: Format = .openapi

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var output: String?

    @Option(name: .customLong("path"), help: ArgumentHelp("A path template that wins over the inferred one, as a prefix (e.g. /repos/{owner}/{repo}); repeatable.", valueName: "template"))
    var paths: [String] = []

    @Option(help: "Distinct path templates per host at most; the rarest beyond it are left out and reported.")
    var maxPaths = 1000

    @Option(help: "Title of the drafted description.")
    var title = "API drafted from traffic"

    func validate() throws {
        guard (source.session == nil) != (har == nil) else { throw ValidationError("give one of --session FILE (or --store URL --session NAME) or --har FILE") }
        if source.storeURL != nil, har != nil { throw ValidationError("--store reads a session: give --session NAME instead of --har") }
        guard maxPaths > 0 else { throw ValidationError("--max-paths must be at least 1") }
    }

    func run() async throws {
        let hints: [PathHint]
        do {
            hints = try paths.map { text throws(PathHint.Invalid) in try PathHint(parsing: text) }
        } catch {
            throw ValidationError(error.description)
        }
        let options = TrafficDraft.Options(hosts: host, hints: hints, maximumTemplates: maxPaths, title: title)
        let draft = try await draft(options)
        for line in draft.skipped {
            Console.error("kagami infer: skipped \(line)\n")
        }
        if draft.operations.isEmpty {
            let filter = host.isEmpty ? "" : " with host \(host.joined(separator: ", "))"
            Console.error("kagami infer: no exchanges\(filter) to describe; the description has no operations\n")
        }
        let text = format == .openapi ? OpenAPIDraftWriter.yaml(draft) : BlueprintDraftWriter.text(draft)
        if let output {
            try OutputFile.write(Data(text.utf8), to: SessionFile.expand(output), mode: 0o600)
            Console.error("kagami infer: \(draft.operations.count) operation\(draft.operations.count == 1 ? "" : "s") from \(draft.exchangeCount) exchange\(draft.exchangeCount == 1 ? "" : "s") written to \(output)\n")
        } else {
            try Console.answer(text)
        }
    }

    /// A session is read a page at a time, twice (paths, then bodies), so its size is not
    /// limited by memory; a HAR file is read whole.
    private func draft(_ options: TrafficDraft.Options) async throws -> TrafficDraft {
        if source.session != nil {
            let reading = try await source.openForReading()
            let store = reading.store
            do {
                let draft = try await TrafficDraft.Builder.draft(options: options) { offset, limit, includeBodies in
                    try await store.flows(offset: offset, limit: limit, includeBodies: includeBodies)
                }
                try await reading.close()
                return draft
            } catch {
                try? await reading.close()
                throw error
            }
        }
        var builder = TrafficDraft.Builder(options: options)
        guard let har else { return builder.draft() }
        let flows: [Flow]
        do {
            flows = try HARFile.read(har, command: "infer").flows
        } catch {
            Console.error("kagami infer: \(error)\n")
            throw ExitCode(2)
        }
        builder.learnPaths(flows)
        builder.describe(flows)
        return builder.draft()
    }
}
