// A diff as people and programs read it: text for a terminal (grouped by operation, coloured
// when asked), JSON (one object per finding), an HTML page, JUnit XML for CI.
import Foundation
import KagamiFlow
import KagamiJSON

public struct DiffReport: Sendable {
    public let diff: CaptureDiff
    /// How the captures are named (`v1.sqlite`, `app.har (status:2xx)`).
    public let beforeLabel: String
    public let afterLabel: String
    /// The kinds that fail the report (`--fail-on`).
    public let failOn: Set<DiffFinding.Kind>

    public init(_ diff: CaptureDiff, beforeLabel: String = "before", afterLabel: String = "after", failOn: Set<DiffFinding.Kind> = []) {
        self.diff = diff
        self.beforeLabel = beforeLabel
        self.afterLabel = afterLabel
        self.failOn = failOn
    }

    /// The findings whose kinds fail the report.
    public var failing: [DiffFinding] { diff.findings.filter { failOn.contains($0.kind) } }

    /// 1 when a finding of a `failOn` kind occurred, else 0.
    public var exitCode: Int32 { failing.isEmpty ? 0 : 1 }

    private var grouped: [(operation: CaptureDiff.OperationCounts, findings: [DiffFinding])] {
        var byOperation: [DiffOperation: [DiffFinding]] = [:]
        for finding in diff.findings { byOperation[finding.operation, default: []].append(finding) }
        return diff.operations.compactMap { counts in byOperation[counts.operation].map { (counts, $0) } }
    }

    private var summaryLine: String {
        let both = diff.operations.filter { $0.before > 0 && $0.after > 0 }.count
        let added = diff.operations.filter { $0.before == 0 }.count
        let removed = diff.operations.filter { $0.after == 0 }.count
        let findings = diff.findings.count
        return "\(diff.operations.count) operation\(diff.operations.count == 1 ? "" : "s"): \(both) in both, \(added) added, \(removed) removed; \(findings) finding\(findings == 1 ? "" : "s")"
    }

    // MARK: Text

    /// Grouped by operation; `colour` adds ANSI colours (added green, removed and failing red,
    /// other changes yellow).
    public func text(colour: Bool = false) -> String {
        func paint(_ text: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        let hosts = Set(diff.operations.map(\.operation.host))
        var out = "\(beforeLabel) (\(diff.beforeExchangeCount) exchange\(diff.beforeExchangeCount == 1 ? "" : "s")) → \(afterLabel) (\(diff.afterExchangeCount) exchange\(diff.afterExchangeCount == 1 ? "" : "s"))\n"
        out += summaryLine + "\n"
        let groups = grouped
        if groups.isEmpty {
            out += "\nNo changes: every operation is called as before.\n"
            return out
        }
        for (counts, findings) in groups {
            let operation = counts.operation
            var head = operation.description
            if let name = operation.name { head += " \"\(name)\"" }
            if hosts.count > 1 { head += "  \(operation.host)" }
            let calls = "\(counts.before) → \(counts.after) call\(counts.after == 1 ? "" : "s")"
            out += "\n"
            if counts.before == 0 {
                out += paint("+ \(head)", "32") + "  " + calls + "\n"
            } else if counts.after == 0 {
                out += paint("- \(head)", "31") + "  " + calls + "\n"
            } else {
                out += paint("~ \(head)", "1") + "  " + calls + "\n"
            }
            for finding in findings where finding.kind != .addedOperation && finding.kind != .removedOperation {
                let mark = failOn.contains(finding.kind) ? "✗ " : "  "
                let code = failOn.contains(finding.kind) ? "31" : Self.isAddition(finding.kind) ? "32" : Self.isRemoval(finding.kind) ? "31" : "33"
                out += "  " + paint(mark + finding.kind.rawValue, code) + "  " + Self.detail(finding) + "\n"
            }
        }
        let failing = failing
        if !failing.isEmpty {
            let kinds = Set(failing.map(\.kind)).sorted().map(\.rawValue).joined(separator: ", ")
            out += "\n" + paint("Failed: \(failing.count) finding\(failing.count == 1 ? "" : "s") of a kind given to --fail-on (\(kinds))", "31") + "\n"
        }
        return out
    }

    static func isAddition(_ kind: DiffFinding.Kind) -> Bool {
        [.addedOperation, .addedField, .addedParameter, .addedHeader].contains(kind)
    }

    static func isRemoval(_ kind: DiffFinding.Kind) -> Bool {
        [.removedOperation, .removedField, .removedParameter, .removedHeader].contains(kind)
    }

    /// `response 200 body /user/email: string → absent`.
    static func detail(_ finding: DiffFinding) -> String {
        switch finding.kind {
        case .order:
            return "called \(finding.after ?? "") (was \(finding.before ?? ""))"
        case .callCount, .status, .slower, .faster, .larger, .smaller:
            let place = finding.location.description
            return (place.isEmpty ? "" : place + ": ") + "\(finding.before ?? "none") → \(finding.after ?? "none")"
        default:
            return "\(finding.location): \(finding.before ?? "absent") → \(finding.after ?? "absent")"
        }
    }

    // MARK: JSON

    public func json() -> JSONValue {
        let both = diff.operations.filter { $0.before > 0 && $0.after > 0 }.count
        var kinds = JSONObject()
        for kind in DiffFinding.Kind.allCases {
            let count = diff.findings.filter { $0.kind == kind }.count
            if count > 0 { kinds[kind.rawValue] = .integer(count) }
        }
        return [
            "before": ["capture": .string(beforeLabel), "exchanges": .integer(diff.beforeExchangeCount)],
            "after": ["capture": .string(afterLabel), "exchanges": .integer(diff.afterExchangeCount)],
            "summary": [
                "operations": .integer(diff.operations.count),
                "inBoth": .integer(both),
                "added": .integer(diff.operations.filter { $0.before == 0 }.count),
                "removed": .integer(diff.operations.filter { $0.after == 0 }.count),
                "findings": .integer(diff.findings.count),
                "kinds": .object(kinds),
                "failOn": .array(failOn.sorted().map { .string($0.rawValue) }),
                "failed": .bool(exitCode != 0),
            ],
            "operations": .array(diff.operations.map { counts in
                var object = Self.operationMembers(counts.operation)
                object["before"] = .integer(counts.before)
                object["after"] = .integer(counts.after)
                object["beforeExchanges"] = .array(counts.beforeExchanges.map { .string($0.uuidString) })
                object["afterExchanges"] = .array(counts.afterExchanges.map { .string($0.uuidString) })
                return .object(object)
            }),
            "findings": .array(diff.findings.map(Self.json)),
        ]
    }

    private static func operationMembers(_ operation: DiffOperation) -> JSONObject {
        [
            "operation": .string(operation.description),
            "method": .string(operation.method),
            "host": .string(operation.host),
            "template": .string(operation.template),
            "operationName": operation.name.map(JSONValue.string) ?? .null,
        ]
    }

    /// One finding: its operation, kind, location (as text and part by part), before, after,
    /// and the exchanges on both sides.
    public static func json(_ finding: DiffFinding) -> JSONValue {
        var object = operationMembers(finding.operation)
        object["kind"] = .string(finding.kind.rawValue)
        object["location"] = .string(finding.location.description)
        let location = finding.location
        object["place"] = [
            "part": .string(location.part.rawValue),
            "side": location.side.map { .string($0.rawValue) } ?? .null,
            "status": location.status.map(JSONValue.string) ?? .null,
            "name": location.name.map(JSONValue.string) ?? .null,
            "pointer": location.pointer.map(JSONValue.string) ?? .null,
        ]
        object["before"] = finding.before.map(JSONValue.string) ?? .null
        object["after"] = finding.after.map(JSONValue.string) ?? .null
        object["beforeExchanges"] = .array(finding.beforeExchanges.map { .string($0.uuidString) })
        object["afterExchanges"] = .array(finding.afterExchanges.map { .string($0.uuidString) })
        object["message"] = .string(finding.message)
        return .object(object)
    }

    // MARK: HTML

    /// A page of its own (no scripts, no outside resources) to attach to a CI run or a review.
    public func html() -> String {
        let e = MarkupText.escaped
        var body = "<h1>What changed: \(e(beforeLabel)) → \(e(afterLabel))</h1>\n"
        body += "<p class=\"summary\">\(diff.beforeExchangeCount) → \(diff.afterExchangeCount) exchanges. \(e(summaryLine)).</p>\n"
        let groups = grouped
        if groups.isEmpty { body += "<p class=\"none\">No changes: every operation is called as before.</p>\n" }
        for (counts, findings) in groups {
            let state = counts.before == 0 ? "added" : counts.after == 0 ? "removed" : "changed"
            body += "<section class=\"operation \(state)\"><h2><code>\(e(counts.operation.description))</code> <span class=\"host\">\(e(counts.operation.host))</span>"
            if let name = counts.operation.name { body += " <span class=\"name\">\(e(name))</span>" }
            body += " <span class=\"calls\">\(counts.before) → \(counts.after) call\(counts.after == 1 ? "" : "s")</span></h2>\n"
            body += "<table><thead><tr><th>Kind</th><th>Where</th><th>Before</th><th>After</th><th>Exchanges</th></tr></thead><tbody>\n"
            for finding in findings {
                let failing = failOn.contains(finding.kind) ? " class=\"failing\"" : ""
                let ids = (finding.beforeExchanges.map { "before \($0.uuidString)" } + finding.afterExchanges.map { "after \($0.uuidString)" })
                    .map { "<code>\(e($0))</code>" }.joined(separator: "<br>")
                body += "<tr\(failing)><td>\(e(finding.kind.rawValue))</td><td>\(e(finding.location.description))</td>"
                body += "<td>\(e(finding.before ?? "—"))</td><td>\(e(finding.after ?? "—"))</td><td class=\"ids\">\(ids)</td></tr>\n"
            }
            body += "</tbody></table></section>\n"
        }
        if exitCode != 0 {
            body += "<p class=\"failed\">Failed: \(failing.count) finding(s) of a kind given to --fail-on.</p>\n"
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>kagami diff: \(e(beforeLabel)) → \(e(afterLabel))</title>
            <style>
            body { font: 14px system-ui, sans-serif; margin: 2em; color: #222; }
            h2 { font-size: 15px; margin: 1.5em 0 0.4em; } .host, .calls, .name { color: #666; font-weight: normal; margin-left: 1em; }
            .added h2 code { color: #1a7f37; } .removed h2 code { color: #cf222e; }
            table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #ddd; vertical-align: top; }
            td.ids { font-size: 11px; } tr.failing td:first-child { color: #cf222e; font-weight: bold; } .failed { color: #cf222e; font-weight: bold; }
            </style></head>
            <body>
            \(body)</body></html>

            """
    }

    // MARK: JUnit

    /// One test case per operation with findings; a finding of a `failOn` kind is a failure,
    /// the others are listed in the case's output.
    public func junit() -> String {
        let e = MarkupText.escaped
        let groups = grouped
        let failures = groups.filter { $0.findings.contains { failOn.contains($0.kind) } }.count
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<testsuites name="kagami diff" tests="\#(max(groups.count, 1))" failures="\#(failures)" errors="0">"# + "\n"
        xml += #"  <testsuite name="\#(e(beforeLabel + " → " + afterLabel))" tests="\#(max(groups.count, 1))" failures="\#(failures)" errors="0">"# + "\n"
        if groups.isEmpty {
            xml += #"    <testcase classname="kagami diff" name="no changes"/>"# + "\n"
        }
        for (counts, findings) in groups {
            let name = counts.operation.description + (counts.operation.name.map { " (\($0))" } ?? "")
            xml += #"    <testcase classname="\#(e(counts.operation.host))" name="\#(e(name))">"# + "\n"
            var output: [String] = []
            for finding in findings {
                let line = "\(finding.kind.rawValue) \(Self.detail(finding))"
                if failOn.contains(finding.kind) {
                    xml += #"      <failure type="\#(e(finding.kind.rawValue))" message="\#(e(line))">\#(e(Self.idsLine(finding)))</failure>"# + "\n"
                } else {
                    output.append(line)
                }
            }
            if !output.isEmpty { xml += "      <system-out>\(e(output.joined(separator: "\n")))</system-out>\n" }
            xml += "    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    private static func idsLine(_ finding: DiffFinding) -> String {
        "before: \(finding.beforeExchanges.map(\.uuidString).joined(separator: ", ")); after: \(finding.afterExchanges.map(\.uuidString).joined(separator: ", "))"
    }
}
