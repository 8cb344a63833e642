// The order in which a capture first calls each operation, the two captures' orders aligned:
// what an app does at launch, say, and what moved ("B calls /config before /feed").
import Foundation

enum CallOrder {
    /// Operations (called by both captures) whose first call moved. The two orders are
    /// aligned on their longest common subsequence, which for two orderings of the same
    /// operations is the longest run increasing in both (O(n log n), so thousands of
    /// operations align at once); each operation outside it moved, and is told relative to
    /// the nearest operation it passed.
    static func findings(before: [DiffOperation: OperationTally], after: [DiffOperation: OperationTally]) -> [DiffFinding] {
        let old = before.sorted { ($0.value.firstPosition, $0.key) < ($1.value.firstPosition, $1.key) }.map(\.key)
        let new = after.sorted { ($0.value.firstPosition, $0.key) < ($1.value.firstPosition, $1.key) }.map(\.key)
        guard old.count > 1, old != new else { return [] }
        let rankBefore = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1, $0) })
        let ranks = new.compactMap { rankBefore[$0] }
        let kept = Set(longestIncreasing(ranks).map { new[$0] })
        var findings: [DiffFinding] = []
        for (index, operation) in new.enumerated() where !kept.contains(operation) {
            guard let rank = rankBefore[operation] else { continue }
            // The first operation after it now that came before it then, or the last before it
            // now that came after it then.
            let passedForward = new[(index + 1)...].first { (rankBefore[$0] ?? 0) < rank }
            let passedBack = new[..<index].last { (rankBefore[$0] ?? 0) > rank }
            let (then, now): (String, String)
            if let other = passedForward {
                (then, now) = ("after \(other)", "before \(other)")
            } else if let other = passedBack {
                (then, now) = ("before \(other)", "after \(other)")
            } else {
                continue
            }
            findings.append(DiffFinding(
                operation: operation, kind: .order, location: .operation, before: then, after: now,
                beforeExchanges: Array((before[operation]?.exchangeIDs ?? []).prefix(1)),
                afterExchanges: Array((after[operation]?.exchangeIDs ?? []).prefix(1))))
        }
        return findings
    }

    /// Indexes into `values` of one longest strictly increasing subsequence (patience sorting).
    static func longestIncreasing(_ values: [Int]) -> [Int] {
        var tails: [Int] = []        // index of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: [Int] = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.append(cursor)
            cursor = previous[cursor]
        }
        return result.reversed()
    }
}
