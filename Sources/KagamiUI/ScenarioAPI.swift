// `/api/scenarios`: the scenario file's scenarios, the one in force, and switching it live.
import Foundation
import Hummingbird
import KagamiJSON
import KagamiScenarios

struct ScenarioAPI: Sendable {
    /// The proxy's scenarios; nil without a proxy.
    let scenarios: ActiveScenario?

    func register(on router: Router<some RequestContext>) {
        router.get("/api/scenarios") { _, _ in
            jsonResponse(Self.json(try self.live().snapshot))
        }
        // `{"active": "empty-feed"}` puts a scenario in force, `{"active": null}` turns it off.
        router.put("/api/scenarios/active") { request, _ in
            let scenarios = try self.live()
            let body = try await BreakpointAPI.text(of: request)
            let value: JSONValue
            do {
                value = try JSONValue(parsing: body)
            } catch {
                throw APIError(.badRequest, "the request body is not JSON: \(error)")
            }
            switch value["active"] {
            case .string(let name)?:
                do throws(ScenarioSwitchError) {
                    try scenarios.use(name)
                } catch {
                    throw APIError(.notFound, error.description, details: ["field": "active"])
                }
            case .null?:
                scenarios.off()
            default:
                throw APIError(.badRequest, "give {\"active\": \"NAME\"} or {\"active\": null}", details: ["field": "active"])
            }
            return jsonResponse(Self.json(scenarios.snapshot))
        }
        // The file read again; when it doesn't read, the scenario in force stays and the error
        // names the file, line and field.
        router.post("/api/scenarios/reload") { _, _ in
            let scenarios = try self.live()
            do throws(ScenarioSwitchError) {
                try await scenarios.reload()
            } catch .unreadable(let error) {
                var details: JSONObject = ["file": .string(error.file), "field": .string(error.field)]
                if let line = error.line { details["line"] = .integer(line) }
                if let column = error.column { details["column"] = .integer(column) }
                throw APIError(.unprocessableContent, error.description, details: details)
            } catch {
                throw APIError(.conflict, error.description)
            }
            return jsonResponse(Self.json(scenarios.snapshot))
        }
    }

    func live() throws(APIError) -> ActiveScenario {
        guard let scenarios else { throw APIError.noProxy }
        return scenarios
    }

    /// `{"file": "scenarios.yaml", "active": "empty-feed", "scenarios": [{"name", "states":
    /// [{"operation", "state", "summary"}]}]}`
    static func json(_ snapshot: ActiveScenario.Snapshot) -> JSONValue {
        let scenarios = (snapshot.file?.scenarios ?? []).map { scenario -> JSONValue in
            [
                "name": .string(scenario.name),
                "states": .array(scenario.rules.map { rule in
                    [
                        "operation": .string(rule.selector.displayString),
                        "state": .string(rule.state.name),
                        "summary": .string(rule.state.summary),
                    ]
                }),
            ]
        }
        return [
            "file": snapshot.file.map { .string($0.name) } ?? .null,
            "active": snapshot.active.map { .string($0.name) } ?? .null,
            "scenarios": .array(scenarios),
        ]
    }
}
