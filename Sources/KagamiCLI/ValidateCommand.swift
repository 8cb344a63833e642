import ArgumentParser
import Foundation
import KagamiContractCheck
import KagamiFlow
import KagamiGRPC
import KagamiHAR
import KagamiOutput
import KagamiProxy
import KagamiStore

/// `kagami validate --contract FILE (--session FILE | --store URL --session NAME | --har FILE)`: recorded traffic checked
/// against API descriptions, for CI.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check recorded exchanges (a session or a HAR file) against API descriptions.",
        discussion: """
            Each exchange is matched to an operation of the first description whose base URL it falls under \
            (the description's servers / HOST, or the URL after `=`), then its request and response are checked. \
            Exits 0 when every checked exchange is documented and valid, 1 on violations, 2 when an input can't be read. \
            Undocumented exchanges and warnings fail only with --fail-on. See docs/CONTRACT-CHECK.md.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, junit
    }

    enum FailOn: String, ExpressibleByArgument, CaseIterable {
        case undocumented, warnings
    }

    @Option(name: .customLong("contract"), help: "API description (API Blueprint or OpenAPI; or gRPC methods from a folder of .proto files, a .proto file or a descriptor set; or grpc-reflection=URL, the methods the gRPC server at URL lists through its server reflection), as FILE or FILE=BASEURL; repeatable.")
    var contracts: [String] = []

    @Flag(help: "Accept any value for a format (date-time, date, time, email, uuid, uri, ipv4, ipv6, hostname, int32, int64…); by default a value must be valid for its format.")
    var noAssertFormat = false

    @OptionGroup var source: SessionOptions

    @Option(help: "HTTP Archive (HAR 1.2) to check, from Kagami or another tool.")
    var har: String?

    @Option(help: "Report format: text (grouped by operation), json, junit.")
    var format: Format = .text

    @Option(name: .customLong("fail-on"), help: "Also fail on: undocumented (exchanges the description doesn't mention), warnings (every warning); repeatable.")
    var failOn: [FailOn] = []

    @Option(help: "Write the report to this file instead of standard output.")
    var output: String?

    func validate() throws {
        if contracts.isEmpty { throw ValidationError("give at least one --contract FILE") }
        if (source.session == nil) == (har == nil) { throw ValidationError("give exactly one of --session FILE (or --store URL --session NAME) and --har FILE") }
        if source.storeURL != nil, har != nil { throw ValidationError("--store reads a session: give --session NAME instead of --har") }
    }

    func run() async throws {
        var checks: [ContractCheck] = []
        for argument in contracts {
            do {
                if let server = try ContractCheck.reflectionServer(argument) {
                    checks.append(try await ContractCheck.reflected(
                        argument, send: try Self.reflectionSend(host: server.host, port: server.port, tls: server.tls), assertsFormat: !noAssertFormat))
                } else {
                    checks.append(try ContractCheck.load(argument, assertsFormat: !noAssertFormat))
                }
            } catch {
                throw unreadable("\(error)")
            }
        }
        var report = ContractReport(ContractSet(checks))
        if let har {
            let flows: [Flow]
            do {
                flows = try HARFile.read(har, command: "validate").flows
            } catch {
                throw unreadable(error.description)
            }
            for flow in flows { report.add(flow) }
        } else {
            let reading: RecordingStore
            do {
                reading = try await source.openForReading()
            } catch {
                throw unreadable("\(error)")
            }
            do {
                // A page at a time, so a large session isn't held in memory whole.
                let page = 500
                var offset = 0
                while true {
                    let flows = try await reading.store.flows(offset: offset, limit: page, includeBodies: true)
                    for flow in flows { report.add(flow) }
                    if flows.count < page { break }
                    offset += page
                }
                try await reading.close()
            } catch {
                try? await reading.close()
                throw unreadable("\(reading.description): \(error)")
            }
        }
        let failOn = ContractReport.FailOn(failOn.map { $0 == .undocumented ? .undocumented : .warnings })
        let text: String
        switch format {
        case .text: text = report.text(failOn: failOn)
        case .json: text = report.json(failOn: failOn).serialized(.prettyPrinted) + "\n"
        case .junit: text = report.junit(failOn: failOn)
        }
        if let output {
            do {
                try OutputFile.write(Data(text.utf8), to: SessionFile.expand(output), mode: 0o600)
            } catch {
                throw unreadable("\(error)")
            }
        } else {
            try Console.answer(text)
        }
        let code = report.exitCode(failOn: failOn)
        if code != 0 { throw ExitCode(code) }
    }

    /// Reflection requests to a server in clear text (h2c), made as `kagami proxy` makes its
    /// own, through the upstream allow list (`KAGAMI_UPSTREAM_ALLOW`); nothing is recorded.
    /// Over TLS the proxy asks, with its interception's upstream trust settings.
    static func reflectionSend(host: String, port: Int, tls: Bool) throws -> ServerReflection.Send {
        guard !tls else {
            throw ContractCheckError([
                "\(ContractCheck.reflectionName)=https://…: kagami validate asks reflection in clear text (http://); give the server's descriptor set, or check live with kagami proxy --contract and HTTPS interception",
            ])
        }
        let asker = try ProxyServer(options: ProxyOptions(), sink: RecordingChain([]))
        return asker.grpcReflectionSend(host: host, port: port, tls: false)
    }

    /// Unreadable input: the reason on standard error, exit status 2.
    private func unreadable(_ message: String) -> ExitCode {
        Console.error("kagami validate: \(message)\n")
        return ExitCode(2)
    }
}
