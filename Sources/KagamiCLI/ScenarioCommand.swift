// `kagami scenario list|use NAME|off|reload|release`: the scenario in force in a running proxy or
// mock, switched through its admin API, and the requests its loading states hold; and `--scenarios FILE --scenario NAME` for `kagami proxy` and `mock`.
import ArgumentParser
import Foundation
import KagamiJSON
import KagamiMCP
import KagamiOutput
import KagamiRecordingProxy
import KagamiScenarios
import KagamiUI
import NIOHTTP1

/// The scenario file a proxy or mock starts with, and the scenario in force from the start.
struct ScenarioOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Scenario file (YAML or JSON): named sets of operations in their empty, loading, error, offline, slow or recorded state. See docs/SCENARIOS.md.",
        valueName: "file"))
    var scenarios: String?

    @Option(help: ArgumentHelp("The scenario of --scenarios in force from the start (switch it later with kagami scenario use).", valueName: "name"))
    var scenario: String?

    func active() async throws -> ActiveScenario {
        guard let scenarios else {
            if scenario != nil { throw ValidationError("--scenario needs the file that defines it: --scenarios FILE") }
            return ActiveScenario()
        }
        do {
            return try await ActiveScenario.load(path: SessionFile.expand(scenarios), active: scenario, reader: Self.readRecording)
        } catch {
            // The file's own error, with its line: no usage text after it.
            Console.error("Error: \(error.description)\n")
            throw ExitCode(2)
        }
    }

    /// A recorded state's recording: an HTTP Archive (`.har`) or a session file.
    static let readRecording: RecordingReader = { path in
        try await Recordings.reader(skipped: { Console.error("kagami scenario: skipped \($0)\n") })(SessionFile.expand(path))
    }

    /// `Scenario: empty-feed (scenarios.yaml)` for the banner.
    func describe(_ active: ActiveScenario) -> String? {
        let snapshot = active.snapshot
        guard let file = snapshot.file else { return nil }
        return "Scenario: \(snapshot.active?.name ?? "off") (\(file.name): \(file.scenarios.map(\.name).joined(separator: ", ")))\n"
    }
}

struct ScenarioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "List the scenarios of a running proxy or mock, switch the one in force, or release the requests a loading state holds.",
        discussion: """
        Talks to the proxy's admin API (its web UI port, --proxy URL) or to a mock's (the admin API it prints, --mock URL) \
        with the installation's admin token. \
        A scenario puts operations in their empty, loading, error, offline, slow or recorded state; see docs/SCENARIOS.md.
        """,
        subcommands: [ScenarioListCommand.self, ScenarioUseCommand.self, ScenarioOffCommand.self, ScenarioReloadCommand.self, ScenarioReleaseCommand.self]
    )
}

/// Where the running proxy's or mock's admin API is.
struct AdminAPIOptions: ParsableArguments {
    @Option(name: [.customLong("proxy"), .customLong("mock")], help: ArgumentHelp(
        "The running proxy's web UI and admin API, or the admin API a mock prints at start (kagami mock --scenarios).", valueName: "url"))
    var proxy = "http://127.0.0.1:8889"

    func api() throws -> AdminAPI {
        try AdminAPI.installation(at: proxy)
    }

    /// The admin API's answer, or its refusal as the command's error.
    func send(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> JSONValue {
        do {
            return try await api().send(method, path, body: body)
        } catch let refusal as AdminAPI.Refusal {
            Console.error("kagami scenario: \(refusal.message)\n")
            throw ExitCode(1)
        } catch let failure as ToolFailure {
            Console.error("kagami scenario: \(failure.message)\n")
            throw ExitCode(1)
        }
    }

    /// The scenarios, one a line, the one in force marked with `*`.
    static func listing(_ answer: JSONValue) -> String {
        guard case .array(let scenarios)? = answer["scenarios"], !scenarios.isEmpty else {
            return "No scenario file is loaded (start kagami proxy or kagami mock with --scenarios FILE).\n"
        }
        let active = answer["active"]?.stringValue
        var text = ""
        for scenario in scenarios {
            let name = scenario["name"]?.stringValue ?? ""
            text += "\(name == active ? "*" : " ") \(name)\n"
            if case .array(let states)? = scenario["states"] {
                for state in states {
                    text += "    \(state["operation"]?.stringValue ?? ""): \(state["summary"]?.stringValue ?? "")\n"
                }
            }
        }
        if active == nil { text += "(no scenario in force)\n" }
        return text
    }
}

struct ScenarioListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the scenarios; the one in force is marked with *.")
    @OptionGroup var admin: AdminAPIOptions

    func run() async throws {
        Console.output(AdminAPIOptions.listing(try await admin.send(.GET, "/api/scenarios")))
    }
}

struct ScenarioUseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "use", abstract: "Put a scenario in force; the next requests get its states.")
    @Argument(help: "The scenario's name.") var name: String
    @OptionGroup var admin: AdminAPIOptions

    func run() async throws {
        _ = try await admin.send(.PUT, "/api/scenarios/active", body: ["active": .string(name)])
        Console.output("Scenario \(name) in force\n")
    }
}

struct ScenarioOffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "off", abstract: "Every operation as-is again.")
    @OptionGroup var admin: AdminAPIOptions

    func run() async throws {
        _ = try await admin.send(.PUT, "/api/scenarios/active", body: ["active": .null])
        Console.output("No scenario in force\n")
    }
}

struct ScenarioReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload", abstract: "Read the scenario file again; when it has errors the scenario in force stays.")
    @OptionGroup var admin: AdminAPIOptions

    func run() async throws {
        Console.output(AdminAPIOptions.listing(try await admin.send(.POST, "/api/scenarios/reload", body: [:])))
    }
}

struct ScenarioReleaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release",
        abstract: "Let requests held by a loading state go on: without an argument, list them.",
        discussion: "A released request goes on as it came (through the proxy to its server, or answered by the mock); the client gets the real answer.")
    @Argument(help: "The held request's id, as listed.") var id: String?
    @Flag(help: "Release every request a loading state holds.") var all = false
    @OptionGroup var admin: AdminAPIOptions

    func validate() throws {
        if id != nil, all { throw ValidationError("give a held request's id or --all, not both") }
    }

    func run() async throws {
        // Breakpoints hold exchanges in the same list; only the loading holds are this command's.
        guard case .array(let listed)? = try await admin.send(.GET, "/api/breakpoints/held")["held"] else { return }
        let loading = listed.filter { $0["reason"]?.stringValue != nil }
        guard id != nil || all else {
            if loading.isEmpty { Console.output("No request is held by a loading state.\n") }
            for held in loading {
                let request = held["request"]
                Console.output("\(held["id"]?.stringValue ?? "")  \(request?["method"]?.stringValue ?? "") \(request?["url"]?.stringValue ?? "")  (\(held["reason"]?.stringValue ?? ""))\n")
            }
            return
        }
        let chosen = all ? loading.compactMap { $0["id"]?.stringValue } : [id ?? ""]
        for held in chosen {
            _ = try await admin.send(.POST, "/api/breakpoints/held/\(held)", body: ["action": "cancel"])
            Console.output("Released \(held)\n")
        }
        if chosen.isEmpty { Console.output("No request is held by a loading state.\n") }
    }
}

extension AdminAPI {
    /// The admin API of the proxy at `baseURL`, with this installation's token; refused, its
    /// message starting with `option` when given, while there is no token yet.
    static func installation(at baseURL: String, option: String? = nil) throws -> AdminAPI {
        let token: String?
        do {
            token = try AdminToken.read()
        } catch {
            throw ValidationError("\(error)")
        }
        guard let token else {
            throw ValidationError("\(option.map { "\($0): " } ?? "")no admin token at \(AdminToken.path) yet; start kagami proxy once (it makes one)")
        }
        return AdminAPI(baseURL: baseURL, token: token)
    }
}
