import KagamiRules
import NIOConcurrencyHelpers

/// The rules the proxy applies now. Replacing them (from a rules file or the admin API) takes
/// effect with the next exchange; exchanges in flight finish under the rules they started with.
public final class ActiveRules: Sendable {
    private let pipeline: NIOLockedValueBox<RulePipeline?>

    public init(_ pipeline: RulePipeline? = nil) {
        self.pipeline = NIOLockedValueBox(pipeline)
    }

    public var current: RulePipeline? {
        pipeline.withLockedValue { $0 }
    }

    public func replace(with pipeline: RulePipeline?) {
        self.pipeline.withLockedValue { $0 = pipeline }
    }
}
