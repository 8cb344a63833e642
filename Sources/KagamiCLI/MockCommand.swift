import ArgumentParser
import Foundation
import KagamiDescription
import KagamiFlow
import KagamiMock
import KagamiOutput
import KagamiRecording

struct MockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock",
        abstract: "Serve an API description (API Blueprint or OpenAPI) as a mock server, with its docs page at /__docs.",
        discussion: "Every exchange is recorded into the session: --session FILE, by default a new file under ~/.kagami/sessions; with --store URL, a session of that database (--session NAME, by default named after the time)."
    )

    @Argument(help: "The description file (.apib, .md, .yaml, .yml, .json).")
    var file: String

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 3000

    @Flag(help: "Answer invalid requests too, without checking parameters and bodies.")
    var noValidate = false

    @Flag(help: "Allow browser clients from any origin (CORS), answering preflights.")
    var cors = false

    @OptionGroup var destination: SessionOptions

    func run() async throws {
        let recording = try await RecordingStore.open(store: destination.storeURL, session: destination.session)
        let store = recording.store
        let server: MockServer
        let display = ReadingDisplay.forTerminal(file: file)
        do {
            defer { display?.finish() }
            server = try await MockServer.start(
                path: file,
                configuration: .init(host: host, port: port, validates: !noValidate, cors: cors),
                sink: Recording(store: store).chain, progress: display?.report)
        } catch let error as MockServerError {
            Console.error("\(file): \(error)\n")
            throw ExitCode(2)
        }
        for line in DescriptionFile.examplesUsedAsWritten(in: server.contract, path: file, "served as written") {
            Console.error(line + "\n")
        }
        let banner = """
        Kagami mock of \(file) (\(server.contract.actions.count) actions) listening on \(server.url)
        Docs: \(server.url)/__docs
        Session: \(recording.description)

        """
        // Unbuffered, so a script or test reading the pipe sees the port at once.
        Console.output(banner)
        await SignalWaiter.waitForTermination()
        try await server.stop()
        try await store.flush()
        let count = try await store.count()
        try await recording.close()
        Console.output("Stopped. \(count) exchange\(count == 1 ? "" : "s") in \(recording.description)\n")
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
            try Data(page.utf8).write(to: URL(fileURLWithPath: output))
        } else {
            try Console.answer(page)
        }
    }
}
