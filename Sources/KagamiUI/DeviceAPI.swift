// What a phone or simulator needs to use the proxy: the machine's addresses, the port, the CA.
import Foundation
import Hummingbird
import KagamiJSON
import KagamiControl
import NIOCore

/// `GET /api/device`: the proxy's address as a device on the network reaches it.
/// `GET /api/clients`: who may use the proxy — the networks allowed from the start, the
/// addresses allowed since, the devices waiting (`pending`) and those denied;
/// `POST /api/clients` `{"address": "192.168.1.23", "decision": "allow"|"deny"|"forget"}` decides.
struct DeviceAPI: Sendable {
    /// The proxy's address as it listens (`http://0.0.0.0:8888`).
    let proxyAddress: String
    /// Kagami's CA certificate (PEM); nil when interception is off or no proxy runs.
    let certificatePath: String?
    /// Who may use the proxy; nil without one.
    let clients: ClientAccess?

    func register(on router: Router<some RequestContext>) {
        router.get("/api/device") { _, _ in self.document() }
        router.get("/api/clients") { _, _ in try self.clientList() }
        router.post("/api/clients") { request, _ in try await self.decide(request) }
    }

    func clientList() throws -> Response {
        guard let clients else { throw APIError.noProxy }
        let state = clients.current
        let formatter = ISO8601DateFormatter()
        func json(_ client: ClientAccess.Client) -> JSONValue {
            [
                "address": .string(client.address), "firstSeen": .string(formatter.string(from: client.firstSeen)),
                "lastSeen": .string(formatter.string(from: client.lastSeen)), "attempts": .integer(client.attempts),
                "lastRequest": client.lastRequest.map(JSONValue.string) ?? .null,
            ]
        }
        return jsonResponse([
            "networks": .array(["loopback"] + state.networks.map { .string($0.description) }),
            "allowed": .array(state.allowed.map(JSONValue.string)),
            "pending": .array(state.pending.map(json)),
            "denied": .array(state.denied.map(json)),
        ])
    }

    func decide(_ request: Request) async throws -> Response {
        guard let clients else { throw APIError.noProxy }
        let text = try await BreakpointAPI.text(of: request)
        let body: JSONValue
        do { body = try JSONValue(parsing: text) } catch { throw APIError(.badRequest, "not JSON: \(error)") }
        guard let address = body["address"]?.stringValue else {
            throw APIError(.badRequest, "address: the device's IP address is needed", details: ["field": "address"])
        }
        guard let decision = body["decision"]?.stringValue.flatMap(ClientAccess.Change.init(rawValue:)) else {
            throw APIError(.badRequest, "decision: allow, deny or forget", details: ["field": "decision"])
        }
        do {
            try clients.change(address, to: decision)
        } catch {
            throw APIError(.badRequest, "address: \(error)", details: ["field": "address"])
        }
        return try clientList()
    }

    func document() -> Response {
        let address = URL(string: proxyAddress)
        let host = (address?.host ?? "127.0.0.1").trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let port = address?.port ?? 8888
        let everywhere = host == "0.0.0.0" || host == "::"
        let lan = Self.networkAddresses(ipv6: host == "::")
        // A proxy bound to one LAN address is reachable there only.
        let reachable = everywhere ? lan : lan.filter { $0.address == host }
        return jsonResponse([
            "listenHost": .string(host),
            "port": .integer(port),
            "listensOnNetwork": .bool(!reachable.isEmpty),
            "addresses": .array(reachable.map { ["interface": .string($0.interface), "address": .string($0.address)] }),
            "caURL": "http://kagami.ssl/",
            "certificatePath": certificatePath.map(JSONValue.string) ?? .null,
        ])
    }

    /// The machine's non-loopback addresses (IPv4, and global IPv6 when the proxy listens on `::`).
    static func networkAddresses(ipv6: Bool) -> [(interface: String, address: String)] {
        guard let devices = try? System.enumerateDevices() else { return [] }
        var seen = Set<String>()
        var result: [(interface: String, address: String)] = []
        for device in devices {
            guard let address = device.address, let ip = address.ipAddress else { continue }
            switch address {
            case .v4:
                if ip.hasPrefix("127.") { continue }
            case .v6:
                if !ipv6 || ip == "::1" || ip.lowercased().hasPrefix("fe80") { continue }
            default:
                continue
            }
            if seen.insert(ip).inserted { result.append((device.name, ip)) }
        }
        return result
    }
}
