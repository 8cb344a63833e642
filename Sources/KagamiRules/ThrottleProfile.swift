import Foundation

/// A network to imitate, as Charles's Throttle Settings describe one.
public struct ThrottleProfile: Sendable, Hashable, Codable {
    public var name: String
    /// Kilobits (1000 bits) per second towards the client; 0 means no limit.
    public var downloadKbps: Double
    /// Kilobits per second towards the server; 0 means no limit.
    public var uploadKbps: Double
    /// Share of the bandwidth actually available, in percent.
    public var utilisation: Double
    /// Round-trip latency in milliseconds, added once per request.
    public var latencyMs: Int
    /// Largest chunk released at once, in bytes.
    public var mtu: Int
    /// Chance in percent that a 10 KiB message gets through; larger messages fail more often.
    public var reliability: Double
    /// Chance in percent that a request sees normal quality rather than a degraded period.
    public var stability: Double
    /// How good quality is during a degraded period, in percent of normal bandwidth.
    public var unstableQuality: QualityRange

    public struct QualityRange: Sendable, Hashable, Codable {
        public var low: Double
        public var high: Double

        public init(low: Double, high: Double) {
            self.low = low
            self.high = high
        }
    }

    public init(
        name: String, downloadKbps: Double, uploadKbps: Double, utilisation: Double = 100, latencyMs: Int = 0,
        mtu: Int = 1500, reliability: Double = 100, stability: Double = 100,
        unstableQuality: QualityRange = QualityRange(low: 100, high: 100)
    ) {
        self.name = name
        self.downloadKbps = downloadKbps
        self.uploadKbps = uploadKbps
        self.utilisation = utilisation
        self.latencyMs = latencyMs
        self.mtu = mtu
        self.reliability = reliability
        self.stability = stability
        self.unstableQuality = unstableQuality
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, downloadKbps, uploadKbps, utilisation, latencyMs, mtu, reliability, stability, unstableQuality
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(.name, default: "Custom")
        downloadKbps = try container.decode(Double.self, forKey: .downloadKbps)
        uploadKbps = try container.decode(Double.self, forKey: .uploadKbps)
        utilisation = try container.decode(.utilisation, default: 100)
        latencyMs = try container.decode(.latencyMs, default: 0)
        mtu = try container.decode(.mtu, default: 1500)
        reliability = try container.decode(.reliability, default: 100)
        stability = try container.decode(.stability, default: 100)
        unstableQuality = try container.decode(.unstableQuality, default: QualityRange(low: 100, high: 100))
        func check(_ ok: Bool, _ key: CodingKeys, _ expected: String) throws {
            if !ok { throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: expected) }
        }
        try check(downloadKbps >= 0, .downloadKbps, "expected 0 (no limit) or more")
        try check(uploadKbps >= 0, .uploadKbps, "expected 0 (no limit) or more")
        try check(utilisation > 0 && utilisation <= 100, .utilisation, "expected a percentage above 0, at most 100")
        try check(latencyMs >= 0, .latencyMs, "expected 0 or more milliseconds")
        try check(mtu >= 68, .mtu, "expected at least 68 bytes")
        try check((0...100).contains(reliability), .reliability, "expected a percentage from 0 to 100")
        try check((0...100).contains(stability), .stability, "expected a percentage from 0 to 100")
        try check(
            (0...100).contains(unstableQuality.low) && (0...100).contains(unstableQuality.high)
                && unstableQuality.low <= unstableQuality.high,
            .unstableQuality, "expected low ≤ high, both percentages")
    }

    /// The delay added once per request.
    public var latency: Duration { .milliseconds(latencyMs) }

    /// Bytes per second one way, after utilisation; nil when unlimited.
    public func bytesPerSecond(_ direction: ThrottleDirection) -> Double? {
        let kbps = direction == .download ? downloadKbps : uploadKbps
        guard kbps > 0 else { return nil }
        return kbps * 1000 / 8 * utilisation / 100
    }
}

public enum ThrottleDirection: String, Sendable, Hashable, Codable {
    /// Server to client: the response.
    case download
    /// Client to server: the request.
    case upload
}

extension ThrottleProfile {
    /// Reliability from a per-packet loss rate, as Network Link Conditioner states it: the chance
    /// that all the 1500-byte packets of a 10 KiB message arrive.
    static func reliability(packetLoss percent: Double) -> Double {
        let packets = (10240.0 / 1500).rounded(.up)
        return (pow(1 - percent / 100, packets) * 10000).rounded() / 100
    }

    /// The presets every installation has; they can't be deleted or replaced. The first group
    /// carries Apple's Network Link Conditioner figures: bandwidths as listed, latency as the sum
    /// of its downlink and uplink delays, reliability from its packet loss.
    public static let builtInPresets: [ThrottleProfile] = [
        ThrottleProfile(name: "100% Loss", downloadKbps: 0, uploadKbps: 0, reliability: 0),
        ThrottleProfile(name: "3G", downloadKbps: 780, uploadKbps: 330, latencyMs: 200),
        ThrottleProfile(name: "DSL", downloadKbps: 2000, uploadKbps: 256, latencyMs: 10),
        ThrottleProfile(name: "Edge", downloadKbps: 240, uploadKbps: 200, latencyMs: 840),
        // Its delay is on name lookups only; once per request is the closest a proxy gets.
        ThrottleProfile(name: "High Latency DNS", downloadKbps: 0, uploadKbps: 0, latencyMs: 3000),
        ThrottleProfile(name: "LTE", downloadKbps: 50000, uploadKbps: 10000, latencyMs: 115),
        ThrottleProfile(
            name: "Very Bad Network", downloadKbps: 1000, uploadKbps: 1000, latencyMs: 1000,
            reliability: reliability(packetLoss: 10)),
        ThrottleProfile(name: "WiFi", downloadKbps: 40000, uploadKbps: 33000, latencyMs: 2),
        ThrottleProfile(name: "WiFi 802.11ac", downloadKbps: 250000, uploadKbps: 100000, latencyMs: 2),
        ThrottleProfile(name: "56 kbps Modem", downloadKbps: 56, uploadKbps: 33.6, latencyMs: 200, mtu: 576),
        ThrottleProfile(name: "256 kbps ISDN/DSL", downloadKbps: 256, uploadKbps: 256, latencyMs: 60),
        ThrottleProfile(name: "512 kbps ISDN/DSL", downloadKbps: 512, uploadKbps: 512, latencyMs: 50),
        ThrottleProfile(name: "1 Mbps", downloadKbps: 1000, uploadKbps: 1000, latencyMs: 40),
        ThrottleProfile(name: "2 Mbps", downloadKbps: 2000, uploadKbps: 2000, latencyMs: 30),
        ThrottleProfile(name: "8 Mbps", downloadKbps: 8000, uploadKbps: 8000, latencyMs: 20),
        ThrottleProfile(name: "16 Mbps", downloadKbps: 16000, uploadKbps: 16000, latencyMs: 20),
        ThrottleProfile(name: "32 Mbps", downloadKbps: 32000, uploadKbps: 32000, latencyMs: 15),
        ThrottleProfile(name: "100 Mbps Fibre", downloadKbps: 100000, uploadKbps: 100000, latencyMs: 5),
    ]
}
