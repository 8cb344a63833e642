/// How far reading a description has got, for a person watching a large one being read:
/// a stage and, where it counts items, how many of how many.
public struct ReadingProgress: Sendable, Hashable {
    /// `parsing`, `decoding`, `validating`, `operations`, `schemas`.
    public var stage: String
    public var done: Int
    public var total: Int

    public init(stage: String, done: Int = 0, total: Int = 0) {
        self.stage = stage
        self.done = done
        self.total = total
    }

    /// Called on the reading thread as the stages go by; counted stages report every few
    /// hundred items.
    public typealias Report = @Sendable (ReadingProgress) -> Void
}
