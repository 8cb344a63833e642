// The inference accuracy benchmark's two halves (bench/infer/run.sh runs them):
//   infer-bench requests SPEC MOCK_URL PROXY_URL SEED  → a bash script of curl requests through the proxy
//   infer-bench score NAME ORIGINAL KAGAMI M2S         → one JSON line of scores per tool
//   infer-bench report SCORES.jsonl                    → the Markdown tables
import Foundation
import KagamiContract
import KagamiDescription
import KagamiJSON

// MARK: Seeded randomness, so a run can be repeated exactly

struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// MARK: Request generation

/// Values that fit a schema, with optional members present at random.
struct ValueMaker {
    var random: SeededGenerator

    mutating func chance() -> Bool { Bool.random(using: &random) }

    mutating func identifier() -> String {
        let letters = Array("abcdefghijkmnpqrstuvwxyz")
        let digits = Array("23456789")
        var text = ""
        for index in 0..<10 {
            let pool = index % 3 == 1 ? digits : letters
            text.append(pool[Int.random(in: 0..<pool.count, using: &random)])
        }
        return text
    }

    mutating func value(for schema: JSONValue?, depth: Int = 0) -> JSONValue {
        guard depth < 8, let schema, let object = schema.objectValue else { return .string(identifier()) }
        if let values = object["enum"]?.arrayValue, let value = values.randomElement(using: &random) { return value }
        if let value = object["const"] { return value }
        if let parts = object["allOf"]?.arrayValue {
            // Objects merge; anything else (a string with a description beside it) is its first typed part.
            // Parts that only annotate (a description beside a reference) say nothing about the value.
            let shaping = ["type", "properties", "items", "enum", "const", "allOf", "anyOf", "oneOf", "format"]
            let typed = parts.filter { part in shaping.contains { part[$0] != nil } }
            let values = typed.map { value(for: $0, depth: depth + 1) }
            guard values.allSatisfy({ $0.objectValue != nil }) else {
                return values.first { $0.objectValue == nil } ?? .null
            }
            var merged = JSONObject()
            for case .object(let members) in values { merged.merge(members) { $1 } }
            return .object(merged)
        }
        for keyword in ["oneOf", "anyOf"] {
            if let branches = object[keyword]?.arrayValue?.filter({ $0["type"]?.stringValue != "null" }), let first = branches.first {
                return value(for: first, depth: depth + 1)
            }
        }
        var type = object["type"]?.stringValue ?? object["type"]?.arrayValue?.compactMap(\.stringValue).first { $0 != "null" }
        if type == nil { type = object["properties"] != nil ? "object" : (object["items"] != nil ? "array" : nil) }
        switch type {
        case "object":
            let required = Set(object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            var members = JSONObject()
            for (name, property) in object["properties"]?.objectValue ?? [:] where required.contains(name) || chance() {
                if property["readOnly"] == true { continue }
                members[name] = value(for: property, depth: depth + 1)
            }
            return .object(members)
        case "array":
            let count = max(object["minItems"]?.intValue ?? 1, Int.random(in: 1...3, using: &random))
            return .array((0..<min(count, 4)).map { _ in value(for: object["items"], depth: depth + 1) })
        case "integer":
            let low = object["minimum"]?.intValue ?? 1
            let high = max(low, min(object["maximum"]?.intValue ?? (low + 9999), low + 99999))
            return .integer(Int.random(in: low...high, using: &random))
        case "number":
            let low = object["minimum"]?.doubleValue ?? 0
            let high = max(low, object["maximum"]?.doubleValue ?? low + 1000)
            return .number((Double.random(in: low...high, using: &random) * 100).rounded() / 100)
        case "boolean":
            return .bool(chance())
        case "null":
            return .null
        default:
            if let example = object["example"] ?? object["examples"]?.arrayValue?.first, chance() { return example }
            switch object["format"]?.stringValue {
            case "date-time": return .string("2026-\(String(format: "%02d", Int.random(in: 1...12, using: &random)))-1\(Int.random(in: 0...9, using: &random))T10:1\(Int.random(in: 0...9, using: &random)):00Z")
            case "date": return .string("2026-0\(Int.random(in: 1...9, using: &random))-1\(Int.random(in: 0...9, using: &random))")
            case "email": return .string("\(identifier())@example.com")
            case "uuid": return .string(UUID(uuid: (UInt8.random(in: 0...255, using: &random), 0x12, 0x34, 0x56, 0x78, 0x9a, 0x4b, 0xcd, 0x8e, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, UInt8.random(in: 0...255, using: &random))).uuidString.lowercased())
            case "uri", "url": return .string("https://example.com/\(identifier())")
            case "ipv4": return .string("10.\(Int.random(in: 0...255, using: &random)).\(Int.random(in: 0...255, using: &random)).1")
            default:
                let minimum = object["minLength"]?.intValue ?? 0
                var text = identifier()
                while text.count < minimum { text += identifier() }
                if let maximum = object["maxLength"]?.intValue, text.count > maximum { text = String(text.prefix(max(maximum, 1))) }
                return .string(text)
            }
        }
    }

    /// A parameter's value as URL text.
    mutating func text(for parameter: Parameter) -> String {
        if let member = parameter.members.randomElement(using: &random) { return member }
        var schema = parameter.schema
        if schema == nil {
            switch parameter.type {
            case "number", "integer": schema = ["type": "integer"]
            case "boolean": schema = ["type": "boolean"]
            default: schema = ["type": "string"]
            }
        }
        switch value(for: schema) {
        case .string(let text): return text
        case .array(let items): return items.first.map(Self.plain) ?? identifier()
        case let other: return Self.plain(other)
        }
    }

    static func plain(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return value.serialized()
    }
}

func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

func percentEncoded(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
}

func requestScript(spec: String, mockURL: String, proxyURL: String, seed: UInt64) throws -> String {
    let file = try DescriptionFile(path: spec)
    var maker = ValueMaker(random: SeededGenerator(seed: seed))
    var lines = ["#!/usr/bin/env bash", "# Generated by infer-bench for \(spec): every operation, varied ids and optional fields, each documented status.", "set -u", "n=0"]
    for action in file.contract.actions {
        let path = action.uriTemplate.components(separatedBy: "{?").first?.components(separatedBy: "{&").first ?? action.uriTemplate
        let queryParameters = action.parameters.filter { $0.location == .query }
        let headerParameters = action.parameters.filter { $0.location == .header && !["accept", "content-type", "authorization"].contains($0.name.lowercased()) }
        let allPayloads = action.examples.flatMap(\.requests).map(\.payload)
        let jsonPayloads = allPayloads.filter { $0.mediaType?.hasSuffix("json") ?? false }
        let requestPayloads = jsonPayloads.isEmpty ? allPayloads : jsonPayloads
        let statuses = Array(Set(action.examples.flatMap(\.responses).map(\.status).filter { $0 >= 100 })).sorted()
        // Eight plain requests, then one asking the mock for each documented status.
        let preferences: [Int?] = Array(repeating: nil, count: 8) + statuses.map { Optional($0) }
        for preference in preferences {
            var expanded = ""
            var index = path.startIndex
            while index < path.endIndex {
                if path[index] == "{", let close = path[index...].firstIndex(of: "}") {
                    let name = String(path[path.index(after: index)..<close]).trimmingCharacters(in: CharacterSet(charactersIn: "+#"))
                    let parameter = action.parameters.first { $0.name == name } ?? Parameter(name: name, location: .path, type: "string")
                    expanded += percentEncoded(maker.text(for: parameter))
                    index = path.index(after: close)
                } else {
                    expanded.append(path[index])
                    index = path.index(after: index)
                }
            }
            var query: [String] = []
            for parameter in queryParameters where parameter.required || maker.chance() {
                query.append("\(percentEncoded(parameter.name))=\(percentEncoded(maker.text(for: parameter)))")
            }
            var command = ["curl", "-s", "-o", "/dev/null", "-w", shellQuoted("%{http_code} \(action.method) \(path)\\n"), "--max-time", "10", "--noproxy", shellQuoted(""), "--proxy", proxyURL, "-X", action.method]
            for parameter in headerParameters where parameter.required || maker.chance() {
                command += ["-H", shellQuoted("\(parameter.name): \(maker.text(for: parameter))")]
            }
            if let preference { command += ["-H", shellQuoted("Prefer: status=\(preference)")] }
            if ["POST", "PUT", "PATCH"].contains(action.method), let payload = requestPayloads.randomElement(using: &maker.random) {
                let mediaType = payload.mediaType ?? "application/json"
                var body: String?
                if let schema = payload.schema, mediaType.hasSuffix("json") {
                    // The documented example one time in four, else a body made from the schema.
                    let useExample = payload.bodyJSON != nil && Int.random(in: 0..<4, using: &maker.random) == 0
                    body = useExample ? payload.bodyJSON?.serialized() : maker.value(for: schema).serialized()
                } else {
                    body = payload.body
                }
                command += ["-H", shellQuoted("Content-Type: \(mediaType)")]
                if let body { command += ["--data-binary", shellQuoted(body)] }
            }
            let url = mockURL + expanded + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            command.append(shellQuoted(url))
            lines.append(command.joined(separator: " ") + " && n=$((n+1))")
        }
    }
    lines.append("echo \"$n requests sent\" >&2")
    return lines.joined(separator: "\n") + "\n"
}

// MARK: Scoring

/// One property of a body schema: `response 200 /items/[]/name`.
struct PropertyFacts {
    var type: String?
    var required: Bool
    var format: String?
}

func normalisedPath(_ template: String) -> String {
    let path = template.components(separatedBy: "{?").first?.components(separatedBy: "{&").first ?? template
    var result = ""
    var inVariable = false
    for character in path {
        if character == "{" { inVariable = true; result += "{}"; continue }
        if character == "}" { inVariable = false; continue }
        if !inVariable { result.append(character) }
    }
    return result
}

func properties(of schema: JSONValue?, prefix: String, required: Bool, into facts: inout [String: PropertyFacts], depth: Int = 0) {
    guard depth < 8, let schema, let object = schema.objectValue else { return }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for branch in object[keyword]?.arrayValue ?? [] where branch["type"]?.stringValue != "null" {
            properties(of: branch, prefix: prefix, required: required, into: &facts, depth: depth + 1)
        }
    }
    let requiredNames = Set(object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    for (name, property) in object["properties"]?.objectValue ?? [:] {
        let path = prefix + "/" + name
        var types = property["type"]?.arrayValue?.compactMap(\.stringValue) ?? property["type"]?.stringValue.map { [$0] } ?? []
        types.removeAll { $0 == "null" }
        if types.isEmpty, let branches = (property["allOf"] ?? property["anyOf"] ?? property["oneOf"])?.arrayValue {
            types = branches.compactMap { $0["type"]?.stringValue ?? ($0["properties"] != nil ? "object" : nil) }.filter { $0 != "null" }
        }
        if types.isEmpty, property["properties"] != nil { types = ["object"] }
        let existing = facts[path]
        facts[path] = PropertyFacts(
            type: existing?.type ?? types.first, required: (existing?.required ?? false) || requiredNames.contains(name),
            format: existing?.format ?? property["format"]?.stringValue)
        properties(of: property, prefix: path, required: requiredNames.contains(name), into: &facts, depth: depth + 1)
        if let items = property["items"] { properties(of: items, prefix: path + "/[]", required: false, into: &facts, depth: depth + 1) }
    }
    if let items = object["items"], prefix.isEmpty || depth == 0 {
        properties(of: items, prefix: prefix + "/[]", required: false, into: &facts, depth: depth + 1)
    }
}

/// Every body property of every operation: `GET /pets/{} response 200 /name`.
func bodyFacts(_ contract: APIContract) -> [String: PropertyFacts] {
    var facts: [String: PropertyFacts] = [:]
    for action in contract.actions {
        let operation = "\(action.method) \(normalisedPath(action.uriTemplate))"
        for example in action.examples {
            for request in example.requests where request.payload.mediaType?.hasSuffix("json") ?? false {
                var local: [String: PropertyFacts] = [:]
                properties(of: request.payload.schema, prefix: "", required: true, into: &local)
                for (key, value) in local { facts["\(operation) request\(key)"] = value }
            }
            for response in example.responses where response.payload.mediaType?.hasSuffix("json") ?? false {
                var local: [String: PropertyFacts] = [:]
                properties(of: response.payload.schema, prefix: "", required: true, into: &local)
                for (key, value) in local { facts["\(operation) response \(response.status)\(key)"] = value }
            }
        }
    }
    return facts
}

struct Scores: Codable {
    var pathPrecision: Double
    var pathRecall: Double
    var pathF1: Double
    var operationF1: Double
    var requiredAccuracy: Double?
    /// The same, for request bodies alone (the generator varies optional members there; the
    /// mock's responses always carry every member).
    var requestRequiredAccuracy: Double?
    var typeAccuracy: Double?
    var formatAccuracy: Double?
    var propertyRecall: Double?
    /// Share of the recorded exchanges `kagami validate` finds valid against the draft.
    var trafficValid: Double?
    var paths: Int
    var operations: Int
}

func f1(_ precision: Double, _ recall: Double) -> Double { precision + recall == 0 ? 0 : 2 * precision * recall / (precision + recall) }

func score(original: APIContract, inferred: APIContract) -> Scores {
    let originalPaths = Set(original.actions.map { normalisedPath($0.uriTemplate) })
    let inferredPaths = Set(inferred.actions.map { normalisedPath($0.uriTemplate) })
    let commonPaths = originalPaths.intersection(inferredPaths)
    let pathPrecision = inferredPaths.isEmpty ? 0 : Double(commonPaths.count) / Double(inferredPaths.count)
    let pathRecall = originalPaths.isEmpty ? 0 : Double(commonPaths.count) / Double(originalPaths.count)
    let originalOperations = Set(original.actions.map { "\($0.method) \(normalisedPath($0.uriTemplate))" })
    let inferredOperations = Set(inferred.actions.map { "\($0.method) \(normalisedPath($0.uriTemplate))" })
    let commonOperations = originalOperations.intersection(inferredOperations)
    let operationF1 = f1(
        inferredOperations.isEmpty ? 0 : Double(commonOperations.count) / Double(inferredOperations.count),
        originalOperations.isEmpty ? 0 : Double(commonOperations.count) / Double(originalOperations.count))

    // Properties of the operations and statuses both describe.
    let theirs = bodyFacts(original)
    let ours = bodyFacts(inferred)
    let comparable = theirs.keys.filter { key in
        commonOperations.contains { key.hasPrefix($0 + " ") } && ours.keys.contains { $0.hasPrefix(key.components(separatedBy: "/").first ?? key) }
    }
    let common = comparable.filter { ours[$0] != nil }
    func accuracy(_ keys: [String], _ same: (PropertyFacts, PropertyFacts) -> Bool) -> Double? {
        guard !keys.isEmpty else { return nil }
        let agreeing = keys.filter { key in
            guard let original = theirs[key], let drafted = ours[key] else { return false }
            return same(original, drafted)
        }
        return Double(agreeing.count) / Double(keys.count)
    }
    if ProcessInfo.processInfo.environment["INFER_BENCH_DETAILS"] != nil {
        // Each disagreement on stderr, to see where a draft and the original part.
        for key in common.sorted() {
            guard let a = theirs[key], let b = ours[key] else { continue }
            if a.required != b.required { FileHandle.standardError.write(Data("required \(a.required) vs \(b.required): \(key)\n".utf8)) }
            if a.type != b.type { FileHandle.standardError.write(Data("type \(a.type ?? "-") vs \(b.type ?? "-"): \(key)\n".utf8)) }
            if a.format != b.format { FileHandle.standardError.write(Data("format \(a.format ?? "-") vs \(b.format ?? "-"): \(key)\n".utf8)) }
        }
    }
    let typed = common.filter { theirs[$0]?.type != nil }
    // The string formats traffic can show; int32/int64/binary and the like are not in any value.
    let visibleFormats: Set<String> = ["date-time", "date", "email", "uri", "uuid", "ipv4"]
    func visible(_ format: String?) -> String? {
        let normalised = format == "url" ? "uri" : format
        return normalised.flatMap { visibleFormats.contains($0) ? $0 : nil }
    }
    let formatted = common.filter { visible(theirs[$0]?.format) != nil || visible(ours[$0]?.format) != nil }
    return Scores(
        pathPrecision: pathPrecision, pathRecall: pathRecall, pathF1: f1(pathPrecision, pathRecall), operationF1: operationF1,
        requiredAccuracy: accuracy(common) { $0.required == $1.required },
        requestRequiredAccuracy: accuracy(common.filter { $0.contains(" request/") }) { $0.required == $1.required },
        typeAccuracy: accuracy(typed) { $0.type == $1.type },
        formatAccuracy: accuracy(formatted) { visible($0.format) == visible($1.format) },
        propertyRecall: comparable.isEmpty ? nil : Double(common.count) / Double(comparable.count),
        trafficValid: nil,
        paths: inferredPaths.count, operations: inferredOperations.count)
}

func contract(_ path: String) -> APIContract? {
    guard FileManager.default.fileExists(atPath: path), let file = try? DescriptionFile(path: path) else { return nil }
    return file.contract.actions.isEmpty && !file.contract.errors.isEmpty ? nil : file.contract
}

// MARK: Report

struct Row: Codable {
    var name: String
    var operations: Int
    var exchanges: Int?
    var kagami: Scores?
    var mitmproxy2swagger: Scores?
    /// Kagami's API Blueprint draft of the same traffic.
    var kagamiBlueprint: Scores?
}

func cell(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "–" }

func report(_ rows: [Row]) -> String {
    let metrics: [(String, (Scores) -> Double?)] = [
        ("path precision", { $0.pathPrecision }), ("path recall", { $0.pathRecall }), ("path F1", { $0.pathF1 }),
        ("operation F1", { $0.operationF1 }), ("required accuracy", { $0.requiredAccuracy }),
        ("required accuracy, request bodies", { $0.requestRequiredAccuracy }), ("type accuracy", { $0.typeAccuracy }),
        ("format accuracy", { $0.formatAccuracy }), ("property recall", { $0.propertyRecall }),
        ("traffic valid against the draft", { $0.trafficValid }),
    ]
    var out = ""
    for row in rows {
        out += "\n### \(row.name) (\(row.operations) operations\(row.exchanges.map { ", \($0) exchanges" } ?? ""))\n\n| metric | Kagami | mitmproxy2swagger | Kagami, API Blueprint |\n| --- | ---: | ---: | ---: |\n"
        for (label, metric) in metrics {
            out += "| \(label) | \(cell(row.kagami.flatMap(metric))) | \(cell(row.mitmproxy2swagger.flatMap(metric))) | \(cell(row.kagamiBlueprint.flatMap(metric))) |\n"
        }
    }
    out += "\n### Mean over \(rows.count) descriptions\n\n| metric | Kagami | mitmproxy2swagger | Kagami, API Blueprint |\n| --- | ---: | ---: | ---: |\n"
    func mean(_ values: [Double?]) -> Double? {
        let present = values.compactMap { $0 }
        return present.isEmpty ? nil : present.reduce(0, +) / Double(present.count)
    }
    for (label, metric) in metrics {
        // A tool with no readable draft scores 0 on paths, operations and traffic; property
        // figures exist only where operations matched.
        let zeroWhenMissing = label.hasPrefix("path") || label.hasPrefix("operation") || label.hasPrefix("traffic")
        let kagami = rows.map { row in row.kagami.map { metric($0) ?? nil } ?? (zeroWhenMissing ? 0 : nil) }
        let m2s = rows.map { row in row.mitmproxy2swagger.map { metric($0) ?? nil } ?? (zeroWhenMissing ? 0 : nil) }
        let blueprint = rows.map { row in row.kagamiBlueprint.map { metric($0) ?? nil } ?? (zeroWhenMissing ? 0 : nil) }
        out += "| \(label) | \(cell(mean(kagami))) | \(cell(mean(m2s))) | \(cell(mean(blueprint))) |\n"
    }
    return out
}

// MARK: Main

let arguments = CommandLine.arguments
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("infer-bench: \(message)\n".utf8))
    exit(2)
}

switch arguments.dropFirst().first {
case "requests":
    guard arguments.count == 6, let seed = UInt64(arguments[5]) else { fail("usage: infer-bench requests SPEC MOCK_URL PROXY_URL SEED") }
    do {
        print(try requestScript(spec: arguments[2], mockURL: arguments[3], proxyURL: arguments[4], seed: seed), terminator: "")
    } catch {
        fail("\(arguments[2]): \(error)")
    }
case "score":
    guard arguments.count == 11 else { fail("usage: infer-bench score NAME ORIGINAL KAGAMI M2S EXCHANGES KAGAMI_VALID M2S_VALID KAGAMI_APIB APIB_VALID") }
    guard let original = contract(arguments[3]) else { fail("cannot read \(arguments[3])") }
    func valid(_ text: String) -> Double? { Double(text).flatMap { $0 < 0 ? nil : $0 } }
    var row = Row(
        name: arguments[2], operations: original.actions.count, exchanges: Int(arguments[6]),
        kagami: contract(arguments[4]).map { score(original: original, inferred: $0) },
        mitmproxy2swagger: contract(arguments[5]).map { score(original: original, inferred: $0) })
    row.kagami?.trafficValid = valid(arguments[7])
    row.mitmproxy2swagger?.trafficValid = valid(arguments[8])
    row.kagamiBlueprint = contract(arguments[9]).map { score(original: original, inferred: $0) }
    row.kagamiBlueprint?.trafficValid = valid(arguments[10])
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    print(String(decoding: (try? encoder.encode(row)) ?? Data(), as: UTF8.self))
case "report":
    guard arguments.count == 3, let text = try? String(contentsOfFile: arguments[2], encoding: .utf8) else { fail("usage: infer-bench report SCORES.jsonl") }
    let rows = text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Row.self, from: Data($0.utf8)) }
    print(report(rows), terminator: "")
default:
    fail("usage: infer-bench requests|score|report …")
}
