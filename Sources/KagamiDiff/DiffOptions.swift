import Foundation
import KagamiContractCheck

/// How two captures are compared.
public struct DiffOptions: Sendable {
    /// A description whose operations group the exchanges it documents (the contract check's
    /// matching); the others are grouped by inferred path templates.
    public var contract: ContractCheck?
    /// Places never reported: JSON Pointers (`/meta/requestId`, `*` for any member or element,
    /// a pointer covers what is below it) and header or query parameter names (any case).
    public var ignore: [String]
    /// How much the median or 95th percentile duration must grow (0.5: by half) to be `slower`…
    public var latencyRatio: Double
    /// …and by at least this many seconds, so a call of 4 ms taking 9 ms is not news.
    public var latencyMinimum: TimeInterval
    /// How much the median or 95th percentile response body size must grow to be `larger`…
    public var sizeRatio: Double
    /// …and by at least this many bytes.
    public var sizeMinimum: Int
    /// How much the number of calls must change (0.2: by a fifth) to be a `call-count` finding;
    /// 0 reports every difference.
    public var callCountRatio: Double
    /// Bodies larger than this are counted but not read.
    public var maximumBodyBytes: Int

    public init(
        contract: ContractCheck? = nil, ignore: [String] = [], latencyRatio: Double = 0.5, latencyMinimum: TimeInterval = 0.05,
        sizeRatio: Double = 0.5, sizeMinimum: Int = 1024, callCountRatio: Double = 0, maximumBodyBytes: Int = 8 << 20
    ) {
        self.contract = contract
        self.ignore = ignore
        self.latencyRatio = latencyRatio
        self.latencyMinimum = latencyMinimum
        self.sizeRatio = sizeRatio
        self.sizeMinimum = sizeMinimum
        self.callCountRatio = callCountRatio
        self.maximumBodyBytes = maximumBodyBytes
    }
}
