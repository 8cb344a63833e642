// One operation's tallies from both captures, compared place by place into findings.
import Foundation
import OrderedCollections

struct OperationComparison {
    let operation: DiffOperation
    let options: DiffOptions
    let ignored: IgnoredPlaces
    private(set) var findings: [DiffFinding] = []

    init(operation: DiffOperation, options: DiffOptions, ignored: IgnoredPlaces) {
        self.operation = operation
        self.options = options
        self.ignored = ignored
    }

    mutating func compare(_ a: OperationTally, _ b: OperationTally) {
        compareCounts(a, b)
        compareStatuses(a, b)
        compareMeasures(a.durations, b.durations, ratio: options.latencyRatio, minimum: options.latencyMinimum,
                        kinds: (.slower, .faster), shown: Self.duration)
        compareMeasures(a.sizes, b.sizes, ratio: options.sizeRatio, minimum: Double(options.sizeMinimum),
                        kinds: (.larger, .smaller), shown: Self.size)
        compareFields(a.query, b.query, location: { DiffLocation(part: .query, side: .request, name: $0) },
                      kinds: (.addedParameter, .removedParameter))
        compareFields(a.requestHeaders, b.requestHeaders, location: { DiffLocation(part: .header, side: .request, name: $0) },
                      kinds: (.addedHeader, .removedHeader))
        compareBodies(a.requestBody, b.requestBody, side: .request, status: nil)
        for (key, old) in a.statuses {
            guard let new = b.statuses[key] else { continue }
            compareFields(old.headers, new.headers, location: { DiffLocation(part: .header, side: .response, status: key, name: $0) },
                          kinds: (.addedHeader, .removedHeader))
            compareBodies(old.body, new.body, side: .response, status: key)
        }
        for (kind, old) in a.messages {
            let location = DiffLocation(part: .messages, name: kind)
            if let new = b.messages[kind] {
                compareShapes(old, new, tokens: [], location: location)
            } else if !ignored.ignores(pointer: []) {
                add(.removedField, location.with(pointer: ""), before: old.typeText, after: nil, old.firstID, nil)
            }
        }
        for (kind, new) in b.messages where a.messages[kind] == nil {
            add(.addedField, DiffLocation(part: .messages, name: kind, pointer: ""), before: nil, after: new.typeText, nil, new.firstID)
        }
    }

    private mutating func add(
        _ kind: DiffFinding.Kind, _ location: DiffLocation, before: String?, after: String?, _ beforeID: UUID?, _ afterID: UUID?
    ) {
        findings.append(DiffFinding(
            operation: operation, kind: kind, location: location, before: before, after: after,
            beforeExchanges: beforeID.map { [$0] } ?? [], afterExchanges: afterID.map { [$0] } ?? []))
    }

    // MARK: The operation as a whole

    private mutating func compareCounts(_ a: OperationTally, _ b: OperationTally) {
        guard a.count != b.count else { return }
        let change = Double(abs(b.count - a.count)) / Double(max(a.count, 1))
        guard change >= options.callCountRatio else { return }
        findings.append(DiffFinding(
            operation: operation, kind: .callCount, location: .operation, before: CaptureDiff.calls(a.count), after: CaptureDiff.calls(b.count),
            beforeExchanges: a.exchangeIDs, afterExchanges: b.exchangeIDs))
    }

    private mutating func compareStatuses(_ a: OperationTally, _ b: OperationTally) {
        let old = Set(a.statuses.keys), new = Set(b.statuses.keys)
        guard old != new else { return }
        func shown(_ statuses: OrderedDictionary<String, OperationTally.StatusTally>) -> String {
            statuses.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value.count)" }.joined(separator: ", ")
        }
        // The exchanges that show the difference: those with a status only their side has.
        let gone = a.statuses.filter { !new.contains($0.key) }.values.flatMap(\.exchangeIDs)
        let came = b.statuses.filter { !old.contains($0.key) }.values.flatMap(\.exchangeIDs)
        findings.append(DiffFinding(
            operation: operation, kind: .status, location: .operation, before: shown(a.statuses), after: shown(b.statuses),
            beforeExchanges: Array((gone.isEmpty ? a.exchangeIDs : gone).prefix(OperationTally.keptIDs)),
            afterExchanges: Array((came.isEmpty ? b.exchangeIDs : came).prefix(OperationTally.keptIDs))))
    }

    /// Median and 95th percentile of each side; a change is reported when either grew (or
    /// shrank) by the ratio and by the minimum, so neither noise on fast calls nor a small
    /// relative change of slow ones is news.
    private mutating func compareMeasures(
        _ a: [OperationTally.Measure], _ b: [OperationTally.Measure], ratio: Double, minimum: Double,
        kinds: (grew: DiffFinding.Kind, shrank: DiffFinding.Kind), shown: (Double) -> String
    ) {
        guard !a.isEmpty, !b.isEmpty else { return }
        let old = a.sorted { $0.value < $1.value }, new = b.sorted { $0.value < $1.value }
        let (a50, a95) = (Self.percentile(old, 0.5), Self.percentile(old, 0.95))
        let (b50, b95) = (Self.percentile(new, 0.5), Self.percentile(new, 0.95))
        func grew(_ x: Double, _ y: Double) -> Bool { y - x >= minimum && y >= x * (1 + ratio) }
        let kind: DiffFinding.Kind
        if grew(a50.value, b50.value) || grew(a95.value, b95.value) {
            kind = kinds.grew
        } else if grew(b50.value, a50.value) || grew(b95.value, a95.value) {
            kind = kinds.shrank
        } else {
            return
        }
        findings.append(DiffFinding(
            operation: operation, kind: kind, location: .operation,
            before: "p50 \(shown(a50.value)), p95 \(shown(a95.value))", after: "p50 \(shown(b50.value)), p95 \(shown(b95.value))",
            beforeExchanges: [a50.id], afterExchanges: [b50.id]))
    }

    /// The sample at `fraction` of the sorted samples (nearest rank).
    static func percentile(_ sorted: [OperationTally.Measure], _ fraction: Double) -> OperationTally.Measure {
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func duration(_ seconds: Double) -> String {
        let milliseconds = seconds * 1000
        return milliseconds < 10 ? String(format: "%.1f ms", milliseconds) : "\(Int(milliseconds.rounded())) ms"
    }

    static func size(_ bytes: Double) -> String {
        bytes < 1024 ? "\(Int(bytes)) B" : bytes < 1024 * 1024 ? String(format: "%.1f KB", bytes / 1024) : String(format: "%.1f MB", bytes / 1024 / 1024)
    }

    // MARK: Parameters and headers

    private mutating func compareFields(
        _ a: FieldTallies, _ b: FieldTallies, location: (String) -> DiffLocation, kinds: (added: DiffFinding.Kind, removed: DiffFinding.Kind)
    ) {
        guard a.total > 0, b.total > 0 else { return }
        for (key, old) in a.fields where !ignored.ignores(name: key) {
            guard let new = b.fields[key] else {
                add(kinds.removed, location(old.name), before: Self.presence(old.seen, of: a.total, value: old.value), after: nil, old.firstID, nil)
                continue
            }
            if (old.seen >= a.total) != (new.seen >= b.total) {
                add(.presence, location(new.name), before: Self.presence(old.seen, of: a.total), after: Self.presence(new.seen, of: b.total), old.firstID, new.firstID)
            }
            if isStableChange(old.value, new.value, name: key) {
                add(.value, location(new.name), before: old.value.text, after: new.value.text, old.value.firstID, new.value.firstID)
            }
        }
        for (key, new) in b.fields where a.fields[key] == nil && !ignored.ignores(name: key) {
            add(kinds.added, location(new.name), before: nil, after: Self.presence(new.seen, of: b.total, value: new.value), nil, new.firstID)
        }
    }

    /// `in every exchange`, `in 3 of 10`; with the value when it never changed and says something.
    static func presence(_ seen: Int, of total: Int, value: ScalarTally? = nil) -> String {
        let place = seen >= total ? "in every exchange" : "in \(seen) of \(total)"
        guard let value, !value.varies, !value.looksVolatile, let text = value.text else { return place }
        return "\(text) (\(place))"
    }

    /// A value that stayed the same within each capture, is not an id, a time or a token, and
    /// is not the same in both.
    private func isStableChange(_ a: ScalarTally, _ b: ScalarTally, name: String) -> Bool {
        guard a.samples > 0, b.samples > 0, !a.varies, !b.varies, !a.looksVolatile, !b.looksVolatile else { return false }
        guard !Volatility.isVolatileName(name) else { return false }
        return !a.sameValue(as: b)
    }

    // MARK: Bodies and messages

    private mutating func compareBodies(_ a: BodyTally, _ b: BodyTally, side: DiffLocation.Side, status: String?) {
        let location = DiffLocation(part: .body, side: side, status: status)
        let old = Set(a.mediaTypes.keys), new = Set(b.mediaTypes.keys)
        // A body sometimes empty and sometimes not is one media type with empty bodies beside it.
        if old.subtracting([BodyTally.empty]) != new.subtracting([BodyTally.empty]) || (old == [BodyTally.empty]) != (new == [BodyTally.empty]) {
            func shown(_ types: OrderedDictionary<String, Int>) -> String {
                types.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
            }
            let gone = old.subtracting(new).sorted().compactMap { a.firstIDs[$0] }.first
            let came = new.subtracting(old).sorted().compactMap { b.firstIDs[$0] }.first
            add(.mediaType, location, before: shown(a.mediaTypes), after: shown(b.mediaTypes), gone ?? a.firstIDs.values.first, came ?? b.firstIDs.values.first)
        }
        if a.json.seen > 0, b.json.seen > 0 {
            compareShapes(a.json, b.json, tokens: [], location: location.with(pointer: ""))
        }
        if a.grpc.seen > 0, b.grpc.seen > 0 {
            compareShapes(a.grpc, b.grpc, tokens: [], location: DiffLocation(part: .grpc, side: side, status: status, pointer: ""))
        }
    }

    /// Compares one place of both sides' bodies (or messages), then the places below it.
    private mutating func compareShapes(_ a: ValueShape, _ b: ValueShape, tokens: [String], location: DiffLocation) {
        guard a.seen > 0, b.seen > 0, !ignored.ignores(pointer: tokens) else { return }
        let here = location.with(pointer: IgnoredPlaces.pointer(tokens))
        let (oldTypes, newTypes) = (a.types, b.types)
        if oldTypes != newTypes {
            add(.type, here, before: a.typeText, after: b.typeText, a.firstID, b.firstID)
        } else if !oldTypes.isEmpty, (a.nulls > 0) != (b.nulls > 0) {
            add(.nullability, here, before: Self.nulls(a), after: Self.nulls(b), a.firstID, b.firstID)
        }
        let name = tokens.last ?? location.name ?? ""
        if oldTypes == newTypes, oldTypes.allSatisfy({ $0 != "object" && $0 != "array" }), isStableChange(a.scalar, b.scalar, name: name) {
            add(.value, here, before: a.scalar.text, after: b.scalar.text, a.scalar.firstID, b.scalar.firstID)
        }
        if a.objects > 0, b.objects > 0 {
            for (member, old) in a.members {
                let below = tokens + [member]
                guard !ignored.ignores(pointer: below) else { continue }
                let place = location.with(pointer: IgnoredPlaces.pointer(below))
                guard let new = b.members[member], new.seen > 0 else {
                    add(.removedField, place, before: old.typeText, after: nil, old.firstID, b.firstID)
                    continue
                }
                let (oldAlways, newAlways) = (old.seen >= a.objects, new.seen >= b.objects)
                if oldAlways != newAlways {
                    add(.presence, place, before: Self.presence(old.seen, inObjects: a.objects), after: Self.presence(new.seen, inObjects: b.objects), old.firstID, new.firstID)
                }
                compareShapes(old, new, tokens: below, location: location)
            }
            for (member, new) in b.members where a.members[member] == nil && new.seen > 0 {
                let below = tokens + [member]
                guard !ignored.ignores(pointer: below) else { continue }
                add(.addedField, location.with(pointer: IgnoredPlaces.pointer(below)), before: nil, after: new.typeText, a.firstID, new.firstID)
            }
        }
        if let old = a.items.first, let new = b.items.first {
            compareShapes(old, new, tokens: tokens + ["*"], location: location)
        }
    }

    static func nulls(_ shape: ValueShape) -> String {
        shape.nulls == 0 ? "never null" : shape.nulls >= shape.seen ? "always null" : "null in \(shape.nulls) of \(shape.seen)"
    }

    static func presence(_ seen: Int, inObjects objects: Int) -> String {
        seen >= objects ? "in every object" : "in \(seen) of \(objects)"
    }
}

extension DiffLocation {
    func with(pointer: String) -> DiffLocation {
        var copy = self
        copy.pointer = pointer
        return copy
    }
}
