// Two captures compared operation by operation.
import Foundation
import KagamiFlow
import KagamiInfer
import Synchronization

/// What changed between a capture before and one after (two builds of an app, say): the
/// operations each calls, grouped by path template or by the description given, and what
/// changed in each.
public struct CaptureDiff: Sendable {
    /// One operation and how often each capture called it.
    public struct OperationCounts: Sendable, Hashable {
        public var operation: DiffOperation
        public var before: Int
        public var after: Int
        /// The first few exchanges of each side.
        public var beforeExchanges: [UUID]
        public var afterExchanges: [UUID]
    }

    /// Ordered by operation, then kind, then place.
    public var findings: [DiffFinding]
    /// Every operation of either capture, ordered by host, template and method.
    public var operations: [OperationCounts]
    public var beforeExchangeCount: Int
    public var afterExchangeCount: Int

    /// Compares two captures read with the same options. Throws when either is empty, or when
    /// they have no operation in common: an empty list of findings always means "no change".
    public init(before: CaptureSummary, after: CaptureSummary) throws(DiffInputError) {
        guard before.exchangeCount > 0 else { throw .empty("the before capture") }
        guard after.exchangeCount > 0 else { throw .empty("the after capture") }
        let options = before.options
        let templates = Self.templates(before, after)
        let old = Self.operations(of: before, templates: templates)
        let new = Self.operations(of: after, templates: templates)
        let common = Set(old.keys).intersection(new.keys)
        guard !common.isEmpty else {
            throw .nothingInCommon(before: Set(old.keys.map(\.host)).sorted(), after: Set(new.keys.map(\.host)).sorted())
        }
        var findings: [DiffFinding] = []
        var counts: [OperationCounts] = []
        let ignored = IgnoredPlaces(options.ignore)
        for operation in Set(old.keys).union(new.keys).sorted() {
            let a = old[operation], b = new[operation]
            counts.append(OperationCounts(
                operation: operation, before: a?.count ?? 0, after: b?.count ?? 0,
                beforeExchanges: a?.exchangeIDs ?? [], afterExchanges: b?.exchangeIDs ?? []))
            switch (a, b) {
            case (let a?, let b?):
                var comparison = OperationComparison(operation: operation, options: options, ignored: ignored)
                comparison.compare(a, b)
                findings += comparison.findings
            case (let a?, nil):
                findings.append(DiffFinding(
                    operation: operation, kind: .removedOperation, location: .operation, before: Self.calls(a.count), after: nil,
                    beforeExchanges: a.exchangeIDs))
            case (nil, let b?):
                findings.append(DiffFinding(
                    operation: operation, kind: .addedOperation, location: .operation, before: nil, after: Self.calls(b.count),
                    afterExchanges: b.exchangeIDs))
            case (nil, nil):
                break
            }
        }
        findings += CallOrder.findings(before: old.filter { common.contains($0.key) }, after: new.filter { common.contains($0.key) })
        let position = Dictionary(uniqueKeysWithValues: counts.enumerated().map { ($1.operation, $0) })
        findings.sort { a, b in
            let (pa, pb) = (position[a.operation] ?? 0, position[b.operation] ?? 0)
            if pa != pb { return pa < pb }
            if a.kind != b.kind { return a.kind < b.kind }
            return a.location.description < b.location.description
        }
        self.findings = findings
        self.operations = counts
        beforeExchangeCount = before.exchangeCount
        afterExchangeCount = after.exchangeCount
    }

    /// Compares two captures held in memory (WebSocket messages by handshake id).
    public init(
        before: [Flow], after: [Flow], options: DiffOptions = DiffOptions(),
        beforeMessages: [UUID: [WebSocketMessage]] = [:], afterMessages: [UUID: [WebSocketMessage]] = [:]
    ) throws(DiffInputError) {
        var old = CaptureSummary(options: options)
        for flow in before { old.add(flow, messages: beforeMessages[flow.id] ?? []) }
        var new = CaptureSummary(options: options)
        for flow in after { new.add(flow, messages: afterMessages[flow.id] ?? []) }
        try self.init(before: old, after: new)
    }

    /// The findings of these kinds.
    public func findings(_ kinds: DiffFinding.Kind...) -> [DiffFinding] {
        findings.filter { kinds.contains($0.kind) }
    }

    static func calls(_ count: Int) -> String { count == 1 ? "1 call" : "\(count) calls" }

    /// Each host's templates, inferred from both captures' paths together: an id seen only in
    /// one capture is still a value of the same template.
    private static func templates(_ before: CaptureSummary, _ after: CaptureSummary) -> [String: PathGeneraliser.Result] {
        let hosts = Array(Set(before.paths.keys).union(after.paths.keys))
        // Hosts are independent, and this runs once both captures are read: on every core.
        let result = Mutex<[String: PathGeneraliser.Result]>([:])
        DispatchQueue.concurrentPerform(iterations: hosts.count) { index in
            let host = hosts[index]
            var counted = before.paths[host] ?? [:]
            counted.merge(after.paths[host] ?? [:], uniquingKeysWith: +)
            var paths: [String] = []
            for (path, count) in counted.sorted(by: { $0.key < $1.key }) {
                paths.append(contentsOf: repeatElement(path, count: count))
            }
            let templates = PathGeneraliser(maximumTemplates: Int.max).generalise(paths)
            result.withLock { $0[host] = templates }
        }
        return result.withLock { $0 }
    }

    /// A side's groups as operations, groups of one template merged in capture order.
    private static func operations(of side: CaptureSummary, templates: [String: PathGeneraliser.Result]) -> [DiffOperation: OperationTally] {
        var result: [DiffOperation: OperationTally] = [:]
        for (key, group) in side.groups.sorted(by: { $0.value.tally.firstPosition < $1.value.tally.firstPosition }) {
            let operation = group.operation ?? DiffOperation(
                method: key.method, host: key.host,
                template: templates[key.host]?.matches[group.samplePath]?.template.description ?? key.path.replacingOccurrences(of: "{}", with: "{id}"))
            result[operation, default: OperationTally()].merge(group.tally)
        }
        return result
    }
}
