import ArgumentParser
import Foundation
import KagamiControl
import KagamiDescription
import KagamiFlow
import KagamiGRPC
import KagamiMock
import KagamiOutput
import KagamiRecording
import KagamiScenarios
import KagamiStore
import KagamiUI

struct MockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock",
        abstract: "Serve an API description (API Blueprint or OpenAPI), or recorded traffic, as a mock server.",
        discussion: """
        A description is served with its docs page at /__docs. Recorded traffic (--session FILE naming an existing session \
        file, or --har FILE) is answered back: requests are matched by method, path and query (with --match-header and \
        --match-body, headers and the body too), repeated calls answer in recorded order and then repeat the last, and \
        recordings take precedence over the description. Every exchange is recorded into the session: --session FILE \
        when it did not exist, else a new file under ~/.kagami/sessions (a replayed recording is never written to); with \
        --store URL, a session of that database (--session NAME, by default named after the time).
        """
    )

    @Argument(help: "The description file (.apib, .md, .yaml, .yml, .json); optional with recorded traffic.")
    var file: String?

    @Option(help: ArgumentHelp("An HTTP Archive (HAR 1.2) whose exchanges are answered back.", valueName: "file"))
    var har: String?

    @Option(name: .customLong("match-header"), help: ArgumentHelp(
        "A request header whose value must match the recorded one too (repeatable).", valueName: "name"))
    var matchHeaders: [String] = []

    @Flag(name: .customLong("match-body"), help: "The request body must match the recorded one too (JSON compared structurally).")
    var matchBody = false

    @Option(help: ArgumentHelp(
        "A server that answers what neither the recording nor the description does (http://host:port[/base]), instead of a 404.",
        valueName: "url"))
    var fallback: String?

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 3000

    @Flag(help: "Answer invalid requests too, without checking parameters and bodies.")
    var noValidate = false

    @Flag(help: "Accept any value for a format (date-time, date, time, email, uuid, uri, ipv4, ipv6, hostname, int32, int64…); by default a value must be valid for its format.")
    var noAssertFormat = false

    @Flag(help: "Allow browser clients from any origin (CORS), answering preflights.")
    var cors = false

    @OptionGroup var grpc: GRPCSchemaOptions

    @Option(name: .customLong("grpc-answers"), help: ArgumentHelp(
        "With --proto-path or --proto-descriptor: a folder of answers, pkg.Service/Method.json each (a message, an array of messages for a stream, or a status), as Map Local's; a method without one answers a message generated from its output type.",
        valueName: "folder"))
    var grpcAnswers: String?

    @OptionGroup var destination: SessionOptions

    @OptionGroup var scenarioOptions: ScenarioOptions

    @Option(name: .customLong("admin-port"), help: ArgumentHelp(
        "With --scenarios: the port of the mock's admin API on 127.0.0.1, where kagami scenario --mock switches the scenario (the mock's port + 1 by default; 0 picks a free one).",
        valueName: "port"))
    var adminPort: Int?

    func run() async throws {
        if let fallback {
            do {
                let url = try AbsoluteURL(parsing: fallback)
                guard url.scheme == "http" || url.scheme == "https", !url.target.contains("?") else {
                    throw ValidationError("--fallback \(fallback): give an http:// or https:// URL without a query")
                }
            } catch let error as AbsoluteURL.ParseError {
                throw ValidationError("--fallback \(fallback): \(error)")
            }
        }
        let schema = try grpc.schema()
        if !schema.isEmpty { return try await serveGRPC(schema) }
        if grpcAnswers != nil { throw ValidationError("--grpc-answers serves the methods of --proto-path or --proto-descriptor; give one") }
        let replayed = try await recordedTraffic()
        guard file != nil || replayed != nil else { throw Self.nothingToServe }
        // A replayed session stays as recorded; the mock's own exchanges go to a new session.
        let recordInto = replayed?.source == destination.session ? nil : destination.session
        let recording = try await RecordingStore.open(store: destination.storeURL, session: recordInto)
        let store = recording.store
        let server: MockServer
        let scenarios = try await scenarioOptions.active()
        let configuration = MockServer.Configuration(
            host: host, port: port, validates: !noValidate, cors: cors, recorded: replayed?.traffic, fallback: fallback,
            assertsFormat: !noAssertFormat, scenarios: scenarios)
        if let file {
            let display = ReadingDisplay.forTerminal(file: file)
            do {
                defer { display?.finish() }
                server = try await MockServer.start(path: file, configuration: configuration, sink: Recording(store: store).chain, progress: display?.report)
            } catch let error as MockServerError {
                Console.error("\(file): \(error)\n")
                throw ExitCode(2)
            }
        } else if let replayed {
            server = try await MockServer.start(recorded: replayed.traffic, configuration: configuration, sink: Recording(store: store).chain)
        } else {
            throw Self.nothingToServe
        }
        if let file {
            for line in DescriptionFile.examplesUsedAsWritten(in: server.contract, path: file, "served as written")
                + DescriptionFile.readingNotes(in: server.contract, path: file) {
                Console.error(line + "\n")
            }
        }
        var lines: [String] = []
        if let file {
            lines.append("Kagami mock of \(file) (\(server.contract.actions.count) actions) listening on \(server.url)")
            lines.append("Docs: \(server.url)/__docs")
        } else {
            lines.append("Kagami mock listening on \(server.url)")
        }
        if let replayed {
            let count = replayed.traffic.exchangeCount
            lines.append("Replaying: \(replayed.source) (\(count) exchange\(count == 1 ? "" : "s"))")
        }
        if let fallback { lines.append("Fallback: \(fallback)") }
        if let scenario = scenarioOptions.describe(scenarios) { lines.append(String(scenario.dropLast())) }
        let admin: (server: MockAdminServer, port: Int)?
        do {
            admin = try await startAdminAPI(scenarios, holds: server.holds, mockPort: server.port)
        } catch {
            try await server.stop()
            try await recording.close()
            throw error
        }
        if let admin {
            lines.append("Admin API: http://127.0.0.1:\(admin.port) (kagami scenario use NAME --mock http://127.0.0.1:\(admin.port))")
        }
        lines.append("Session: \(recording.description)")
        let banner = lines.joined(separator: "\n") + "\n\n"
        // Unbuffered, so a script or test reading the pipe sees the port at once.
        Console.output(banner)
        await SignalWaiter.waitForTermination()
        await admin?.server.stop()
        try await server.stop()
        try await store.flush()
        let count = try await store.count()
        try await recording.close()
        Console.output("Stopped. \(count) exchange\(count == 1 ? "" : "s") in \(recording.description)\n")
    }

    /// The schema's gRPC methods over h2c (`GRPCMockServer`), each call recorded into the session.
    private func serveGRPC(_ schema: ProtobufSchema) async throws {
        guard file == nil, har == nil, scenarioOptions.scenarios == nil else {
            throw ValidationError("with --proto-path or --proto-descriptor the mock serves gRPC methods only: give no description file, --har or --scenarios")
        }
        let answers = grpcAnswers.map(SessionFile.expand)
        if let answers {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: answers, isDirectory: &isFolder), isFolder.boolValue else {
                throw ValidationError("--grpc-answers \(answers) is not a folder")
            }
        }
        let recording = try await RecordingStore.open(store: destination.storeURL, session: destination.session)
        let server = try await GRPCMockServer.start(
            GRPCMockServer.Configuration(host: host, port: port, schema: schema, answers: answers), sink: Recording(store: recording.store).chain)
        var banner = "Kagami gRPC mock of \(schema.methods.count) method\(schema.methods.count == 1 ? "" : "s") listening on \(server.url) (h2c)\n"
        banner += grpc.describe(schema) ?? ""
        banner += "Answers: \(answers ?? "none (messages generated from the schema)")\n"
        banner += "Session: \(recording.description)\n\n"
        Console.output(banner)
        await SignalWaiter.waitForTermination()
        try await server.stop()
        try await recording.store.flush()
        let count = try await recording.store.count()
        try await recording.close()
        Console.output("Stopped. \(count) exchange\(count == 1 ? "" : "s") in \(recording.description)\n")
    }

    /// The admin API `kagami scenario --mock` talks to, when there are scenarios to switch:
    /// loopback only, with the installation's token, as the proxy's.
    private func startAdminAPI(_ scenarios: ActiveScenario, holds: Breakpoints, mockPort: Int) async throws -> (server: MockAdminServer, port: Int)? {
        guard scenarioOptions.scenarios != nil else {
            if adminPort != nil { throw ValidationError("--admin-port serves the scenarios of --scenarios FILE; give the file") }
            return nil
        }
        let port = adminPort ?? (port == 0 ? 0 : mockPort + 1)
        let admin = MockAdminServer(scenarios: scenarios, holds: holds, token: try AdminToken.installation(), port: port)
        do {
            return (admin, try await admin.start())
        } catch {
            throw ValidationError("the admin API could not listen on 127.0.0.1:\(port) (\(error)); give another --admin-port, or 0 for a free one")
        }
    }

    private static let nothingToServe = ValidationError(
        "give a description file, an existing session file (--session FILE) or --har FILE to serve")

    /// The recording named by `--har`, or by `--session` when that session file exists.
    private func recordedTraffic() async throws -> (traffic: RecordedTraffic, source: String)? {
        let matching = RecordedMatching(headers: matchHeaders, body: matchBody)
        let flows: [Flow]
        let source: String
        if let har {
            if destination.session.map({ FileManager.default.fileExists(atPath: SessionFile.expand($0)) }) == true, destination.storeURL == nil {
                throw ValidationError("give one recording: --har FILE or an existing --session FILE, not both")
            }
            do {
                flows = try HARFile.read(har, command: "mock").flows
            } catch {
                Console.error("kagami mock: \(error)\n")
                throw ExitCode(2)
            }
            source = har
        } else if destination.storeURL == nil, let session = destination.session, FileManager.default.fileExists(atPath: SessionFile.expand(session)) {
            let store = try SessionFile.open(session)
            flows = try await store.allFlows()
            await store.close()
            source = session
        } else {
            return nil
        }
        do {
            return (try RecordedTraffic(flows: flows, matching: matching, source: source), source)
        } catch {
            Console.error("kagami mock: \(error)\n")
            throw ExitCode(2)
        }
    }
}

struct DocsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docs",
        abstract: "Render an API description as one HTML page."
    )

    @Argument(help: "The description file.")
    var file: String

    @Option(name: .shortAndLong, help: "Where to write the page (standard output when omitted).")
    var output: String?

    @Option(help: "Base URL used in the page's curl lines.")
    var baseURL = "http://127.0.0.1:3000"

    func run() throws {
        let description = try DescriptionFile.readOrExit(path: file)
        for line in description.diagnostics() {
            Console.error(line + "\n")
        }
        let page = DocsPage.render(description.contract, baseURL: baseURL)
        if let output {
            try OutputFile.write(Data(page.utf8), to: output, mode: 0o644)
        } else {
            try Console.answer(page)
        }
    }
}
