// Violations and coverage of a set of flows against the descriptions in force, as text
// (grouped by operation, with the description's file:line), JSON, or JUnit XML.
import Foundation
import KagamiContract
import KagamiFlow
import KagamiJSON

/// The descriptions in force, in the order given: a flow is checked against the first whose
/// base URL it falls under.
public struct ContractSet: Sendable {
    public var checks: [ContractCheck]

    public init(_ checks: [ContractCheck]) { self.checks = checks }

    /// The index of the description that checked the flow, and what it found; nil when the
    /// flow is outside every description or has no response.
    public func check(_ flow: Flow) -> (description: Int, result: ContractCheckResult)? {
        for (index, check) in checks.enumerated() where check.relativeTarget(of: flow) != nil {
            guard let result = check.check(flow) else { return nil }
            return (index, result)
        }
        return nil
    }
}

extension ContractViolation {
    /// The violation's fields by their report names, with the exchange's.
    public func json(flowId: UUID? = nil, method: String? = nil, url: String? = nil) -> JSONValue {
        var object: JSONObject = [:]
        if let flowId { object["flowId"] = .string(flowId.uuidString) }
        if let method { object["method"] = .string(method) }
        if let url { object["url"] = .string(url) }
        object["operation"] = operation.map { operation -> JSONValue in
            ["name": .string(operation.name), "method": .string(operation.method), "template": .string(operation.template)]
        } ?? .null
        object["kind"] = .string(kind.rawValue)
        object["side"] = .string(side.rawValue)
        object["location"] = .string(location.rawValue)
        object["name"] = name.map(JSONValue.string) ?? .null
        object["instancePointer"] = instancePointer.map(JSONValue.string) ?? .null
        object["schemaPointer"] = schemaPointer.map(JSONValue.string) ?? .null
        object["keyword"] = keyword.map(JSONValue.string) ?? .null
        object["expected"] = expected.map(JSONValue.string) ?? .null
        object["actual"] = actual.map(JSONValue.string) ?? .null
        object["schemaExcerpt"] = schemaExcerpt.map(JSONValue.string) ?? .null
        object["message"] = .string(message)
        object["severity"] = .string(severity.rawValue)
        return .object(object)
    }
}

public struct ContractReport: Sendable {
    /// What makes the report fail besides errors.
    public struct FailOn: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Exchanges the description doesn't mention (path, method or status).
        public static let undocumented = FailOn(rawValue: 1)
        /// Every warning (undocumented exchanges included).
        public static let warnings = FailOn(rawValue: 2)
    }

    public struct Finding: Sendable {
        public var flowId: UUID
        public var method: String
        public var url: String
        public var description: Int
        public var violation: ContractViolation
    }

    public let set: ContractSet
    public private(set) var coverage: [ContractCoverage]
    public private(set) var findings: [Finding] = []
    public private(set) var exchanges = 0
    public private(set) var checked = 0

    public init(_ set: ContractSet) {
        self.set = set
        coverage = set.checks.map(ContractCoverage.init)
    }

    /// Checks one flow and keeps what it found.
    public mutating func add(_ flow: Flow) {
        exchanges += 1
        guard let (index, result) = set.check(flow) else { return }
        checked += 1
        coverage[index].record(result)
        for violation in result.violations {
            findings.append(Finding(flowId: flow.id, method: flow.request.method, url: flow.request.url, description: index, violation: violation))
        }
    }

    public func fails(_ violation: ContractViolation, failOn: FailOn) -> Bool {
        switch violation.severity {
        case .error: return true
        case .warning: return failOn.contains(.warnings) || (failOn.contains(.undocumented) && violation.kind.isUndocumented)
        case .info: return false
        }
    }

    /// 0 when nothing fails, 1 otherwise.
    public func exitCode(failOn: FailOn) -> Int32 {
        findings.contains { fails($0.violation, failOn: failOn) } ? 1 : 0
    }

    private func count(_ severity: ContractViolation.Severity) -> Int {
        findings.filter { $0.violation.severity == severity }.count
    }

    /// The line of the description where the operation is written.
    private func line(of operation: ContractViolation.Operation?, in description: Int) -> Int? {
        guard let operation else { return nil }
        return coverage[description].operations.first { $0.operation == operation }?.line
    }

    /// `file:line` of the operation (the file alone when the line is unknown).
    private func place(of operation: ContractViolation.Operation?, in description: Int) -> String {
        let path = set.checks[description].path
        return line(of: operation, in: description).map { "\(path):\($0)" } ?? path
    }

    // MARK: Text

    public func text(failOn: FailOn = []) -> String {
        var lines: [String] = []
        for (index, check) in set.checks.enumerated() {
            let coverage = coverage[index]
            lines.append("\(check.path) (\(check.baseURLs.isEmpty ? "any host" : check.baseURLs.map(\.description).joined(separator: ", ")))")
            let mine = findings.filter { $0.description == index }
            for operation in coverage.operations {
                let found = mine.filter { $0.violation.operation == operation.operation }
                let name = operation.operation.name.isEmpty ? "" : " \"\(operation.operation.name)\""
                let exercised = operation.exchanges == 0 ? "not exercised" : "\(operation.exchanges) exchange\(operation.exchanges == 1 ? "" : "s")"
                lines.append("  \(operation.operation.method) \(operation.operation.template)\(name)  \(place(of: operation.operation, in: index))  \(exercised)")
                for finding in found { lines.append("    \(place(of: operation.operation, in: index)): " + line(finding, failOn: failOn)) }
            }
            let undocumented = mine.filter { $0.violation.operation == nil }
            if !undocumented.isEmpty {
                lines.append("  Undocumented  \(check.path)")
                for finding in undocumented { lines.append("    \(check.path): " + line(finding, failOn: failOn)) }
            }
            lines.append("  Coverage: \(coverage.operationsSeen)/\(coverage.operations.count) operations, \(coverage.statusesSeen)/\(coverage.statusesDocumented) documented statuses, \(coverage.propertiesSeen)/\(coverage.propertiesDocumented) response properties")
        }
        let failing = findings.filter { fails($0.violation, failOn: failOn) }.count
        lines.append("Checked \(checked) of \(exchanges) exchange\(exchanges == 1 ? "" : "s") against \(set.checks.count) description\(set.checks.count == 1 ? "" : "s"): \(count(.error)) error\(count(.error) == 1 ? "" : "s"), \(count(.warning)) warning\(count(.warning) == 1 ? "" : "s"), \(count(.info)) not checked; \(failing == 0 ? "passed" : "failed (\(failing) failing)")")
        return lines.joined(separator: "\n") + "\n"
    }

    private func line(_ finding: Finding, failOn: FailOn) -> String {
        let violation = finding.violation
        var text = "\(violation.severity.rawValue): \(violation.side.rawValue) \(violation.place): \(violation.message)"
        if let keyword = violation.keyword { text += " [\(keyword)]" }
        var details: [String] = []
        if let expected = violation.expected { details.append("expected \(expected)") }
        if let actual = violation.actual { details.append("actual \(actual)") }
        if let schemaPointer = violation.schemaPointer { details.append("schema \(schemaPointer)") }
        if !details.isEmpty { text += " (" + details.joined(separator: "; ") + ")" }
        return text + "  \(finding.method) \(finding.url)  flow \(finding.flowId.uuidString)"
    }

    // MARK: JSON

    public func json(failOn: FailOn = []) -> JSONValue {
        [
            "violations": .array(findings.map { finding in
                guard case .object(var object) = finding.violation.json(flowId: finding.flowId, method: finding.method, url: finding.url) else { return .null }
                object["description"] = .string(set.checks[finding.description].path)
                object["descriptionLine"] = line(of: finding.violation.operation, in: finding.description).map(JSONValue.integer) ?? .null
                return .object(object)
            }),
            "coverage": .array(coverage.map(\.json)),
            "summary": [
                "exchanges": .integer(exchanges),
                "checked": .integer(checked),
                "errors": .integer(count(.error)),
                "warnings": .integer(count(.warning)),
                "notChecked": .integer(count(.info)),
                "failed": .bool(exitCode(failOn: failOn) != 0),
            ],
        ]
    }

    // MARK: JUnit

    /// One test suite per description, one test case per operation (plus one for undocumented
    /// exchanges); a failure per failing violation, other findings in the case's output.
    public func junit(failOn: FailOn = []) -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let failures = findings.filter { fails($0.violation, failOn: failOn) }.count
        let cases = coverage.reduce(0) { $0 + $1.operations.count + 1 }
        xml += #"<testsuites name="kagami validate" tests="\#(cases)" failures="\#(failures)" errors="0">"# + "\n"
        for (index, check) in set.checks.enumerated() {
            let coverage = coverage[index]
            let mine = findings.filter { $0.description == index }
            var groups: [(name: String, line: Int?, exercised: Bool, findings: [Finding])] = coverage.operations.map { operation in
                let label = "\(operation.operation.method) \(operation.operation.template)" + (operation.operation.name.isEmpty ? "" : " (\(operation.operation.name))")
                return (label, operation.line, operation.exchanges > 0, mine.filter { $0.violation.operation == operation.operation })
            }
            let undocumented = mine.filter { $0.violation.operation == nil }
            groups.append(("undocumented exchanges", nil, true, undocumented))
            let suiteFailures = mine.filter { fails($0.violation, failOn: failOn) }.count
            let skipped = groups.filter { !$0.exercised }.count
            xml += #"  <testsuite name="\#(MarkupText.escaped(check.path))" tests="\#(groups.count)" failures="\#(suiteFailures)" errors="0" skipped="\#(skipped)">"# + "\n"
            for group in groups {
                let line = group.line.map { #" line="\#($0)""# } ?? ""
                xml += #"    <testcase classname="\#(MarkupText.escaped(check.path))" name="\#(MarkupText.escaped(group.name))" file="\#(MarkupText.escaped(check.path))"\#(line)>"# + "\n"
                if !group.exercised { xml += #"      <skipped message="not exercised by the traffic"/>"# + "\n" }
                var output: [String] = []
                for finding in group.findings {
                    let violation = finding.violation
                    let detail = self.line(finding, failOn: failOn)
                    if fails(violation, failOn: failOn) {
                        xml += #"      <failure message="\#(MarkupText.escaped(violation.side.rawValue + " " + violation.place + ": " + violation.message))" type="\#(violation.kind.rawValue)">\#(MarkupText.escaped(detail))</failure>"# + "\n"
                    } else {
                        output.append(detail)
                    }
                }
                if !output.isEmpty { xml += "      <system-out>\(MarkupText.escaped(output.joined(separator: "\n")))</system-out>\n" }
                xml += "    </testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        xml += "</testsuites>\n"
        return xml
    }

}
