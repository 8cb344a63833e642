// A large YAML document read in parts on all cores: libyaml reads one event at a time, and a
// 50 MB description took seconds of one core. The text is cut at lines where the block
// structure is known from the line alone, each part is read as a document of its own, and the
// parts' members are put back together in order. Whenever a part does not read as the cut
// expects, the document is read whole instead, so the values, positions and errors are always
// those of one pass.
//
// Where it cuts, and why a part then reads as it does in the whole document:
// - at a line starting in column 0 with a key (the parts before it and after are members of
//   the root mapping): a root mapping's key in column 0 ends every block opened after it, so
//   only a quoted scalar or a flow collection left open could make the line mean something
//   else, and the part before would then end inside it, which libyaml refuses;
// - at a line starting in column 2 with a key, when the last root member before it holds a
//   block mapping written from column 2 (the part then holds more members of that mapping,
//   and ends before the next key in column 0): for the same reason, with content in a column
//   below 2 ending the part's mapping, and what follows it in the part refused as a second
//   document.
// An alias naming an anchor of another part is refused by the part (it has no such anchor);
// a key repeated across parts, and a document past the limits, are left to the whole read.
import Dispatch
import Foundation
import KagamiJSON
import Synchronization

enum YAMLDocumentParts {
    /// Documents smaller than this are read whole: cutting them gains nothing.
    static let smallest = 1 << 20

    /// Where a part starts and what it holds.
    struct Cut: Equatable {
        /// Byte offset of the part's first line.
        var start: Int
        /// Lines before it (libyaml's lines: every line break before `start` is a line feed).
        var line: Int
        /// 0: members of the root mapping; 2: members of the mapping the last root member
        /// before the part holds.
        var column: Int
    }

    /// The document read in parts on all cores; nil when it is small, cannot be cut, or a
    /// part does not read as the cut expects: then it is to be read whole.
    /// `parts`: how many parts to aim at whatever the size (four per core, from `smallest`
    /// bytes, when nil).
    static func read(
        _ bytes: UnsafeBufferPointer<UInt8>, limits: YAMLDocument.Limits, offset: @escaping @Sendable (Int, Int, Int) -> Int,
        parts wanted: Int? = nil
    ) -> (value: JSONValue, positions: JSONSourcePositions)? {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard let wanted = wanted ?? (bytes.count >= smallest && cores > 1 ? min(4 * cores, 32) : nil),
              let cuts = cuts(of: bytes, parts: wanted) else { return nil }
        let parts = Mutex<[YAMLValueReader.Part?]>(Array(repeating: nil, count: cuts.count))
        // Only read, by every part's reader at once, while this function runs.
        nonisolated(unsafe) let bytes = bytes
        DispatchQueue.concurrentPerform(iterations: cuts.count) { index in
            let cut = cuts[index]
            let end = index + 1 < cuts.count ? cuts[index + 1].start : bytes.count
            var reader = YAMLValueReader(limits: limits, offset: offset, lineBase: cut.line)
            let slice = UnsafeBufferPointer(rebasing: bytes[cut.start..<end])
            let part = try? reader.readPart(slice, column: cut.column, depth: cut.column == 0 ? 0 : 1)
            parts.withLock { $0[index] = part }
        }
        return stitch(parts.withLock { $0 }, cuts: cuts, limits: limits)
    }

    /// The parts' members put together in document order; nil when a part is missing or does
    /// not fit the cut (see the file's opening comment), a key repeats across parts, or the
    /// parts stand for more nodes than the limits allow.
    static func stitch(
        _ parts: [YAMLValueReader.Part?], cuts: [Cut], limits: YAMLDocument.Limits
    ) -> (value: JSONValue, positions: JSONSourcePositions)? {
        guard let first = parts.first??.members, let rootOffset = parts.first??.offset,
              parts.allSatisfy({ $0?.members.repeated == false }) else { return nil }
        var root = first
        // The root's last member while parts in column 2 add to it, taken out of `root`.
        var open: (key: String, members: YAMLValueReader.Members, offset: Int)?
        // Every part's own mapping is counted once in its nodes; the document has one root.
        var nodes = 1
        func close() -> Bool {
            guard let (key, members, offset) = open else { return true }
            open = nil
            guard root.object[key] == nil else { return false }
            root.object[key] = .object(members.object)
            root.positions.append(JSONSourcePositions(offset: offset, children: members.positions))
            return true
        }
        for (index, (part, cut)) in zip(parts, cuts).enumerated() {
            guard let part else { return nil }
            nodes += part.nodes - 1
            guard index > 0 else { continue }
            if cut.column == 0 {
                guard close() else { return nil }
                for ((key, value), positions) in zip(part.members.object, part.members.positions) {
                    guard root.object[key] == nil else { return nil }
                    root.object[key] = value
                    root.positions.append(positions)
                }
                root.lastValueColumn = part.members.lastValueColumn
                continue
            }
            if open == nil {
                // The root's last member holds the block mapping this part continues.
                guard root.lastValueColumn == 2, case .object(let object)? = root.object.values.last,
                      let key = root.object.keys.last, let positions = root.positions.last else { return nil }
                root.object.removeLast()
                root.positions.removeLast()
                open = (key, YAMLValueReader.Members(object: object, positions: positions.children), positions.offset)
            }
            guard var members = open?.members else { return nil }
            open?.members = YAMLValueReader.Members()
            for ((key, value), positions) in zip(part.members.object, part.members.positions) {
                guard members.object[key] == nil else { return nil }
                members.object[key] = value
                members.positions.append(positions)
            }
            open?.members = members
        }
        guard close(), nodes <= limits.maximumNodes else { return nil }
        return (.object(root.object), JSONSourcePositions(offset: rootOffset, children: root.positions))
    }

    /// Where to cut the document into about `parts` parts of similar size, or nil when it has
    /// no such lines, or holds something that makes cutting it unsafe to reason about: a line in
    /// column 0 that is not a key, a sequence entry, a comment or blank (a directive, `---`,
    /// `...`, a tab), or a line break other than a line feed (libyaml counts those as lines too).
    static func cuts(of bytes: UnsafeBufferPointer<UInt8>, parts: Int) -> [Cut]? {
        var keysAtRoot: [Cut] = []
        // Keys in column 2 that are not the first in their root member's mapping.
        var keysBelow: [Cut] = []
        var keysInMember = 0
        var line = 0
        var index = 0
        let count = bytes.count
        while index < count {
            // At the start of a line.
            let byte = bytes[index]
            if isKeyStart(byte) {
                if byte == 0x2E, index + 2 < count, bytes[index + 1] == 0x2E, bytes[index + 2] == 0x2E { return nil }
                keysAtRoot.append(Cut(start: index, line: line, column: 0))
                keysInMember = 0
            } else if byte == 0x20 {
                if !keysAtRoot.isEmpty, keysInMember >= 0, index + 2 < count, bytes[index + 1] == 0x20, isKeyStart(bytes[index + 2]) {
                    keysInMember += 1
                    if keysInMember > 1 { keysBelow.append(Cut(start: index, line: line, column: 2)) }
                }
            } else if byte == 0x2D, index + 1 < count, [0x20, 0x0A, 0x0D].contains(bytes[index + 1]) {
                // An entry of a sequence in column 0 (a root member's value): the keys in
                // column 2 after it are its entries' keys.
                keysInMember = -1
            } else if byte != 0x23, byte != 0x0A, byte != 0x0D {
                return nil
            }
            // To the next line.
            while index < count {
                let byte = bytes[index]
                index += 1
                if byte == 0x0A { break }
                if byte == 0x0D, index < count, bytes[index] != 0x0A { return nil }
                // NEL (C2 85), LINE SEPARATOR and PARAGRAPH SEPARATOR (E2 80 A8/A9).
                if byte == 0xC2, index < count, bytes[index] == 0x85 { return nil }
                if byte == 0xE2, index + 1 < count, bytes[index] == 0x80, bytes[index + 1] == 0xA8 || bytes[index + 1] == 0xA9 { return nil }
            }
            line += 1
        }
        guard !keysBelow.isEmpty, parts > 1 else { return nil }
        // A cut in column 2 at the first such key past each share's end…
        var cuts = [Cut(start: 0, line: 0, column: 0)]
        var next = 0
        for share in 1..<parts {
            let target = count / parts * share
            while next < keysBelow.count, keysBelow[next].start < target { next += 1 }
            guard next < keysBelow.count else { break }
            if keysBelow[next].start > cuts[cuts.count - 1].start { cuts.append(keysBelow[next]) }
        }
        // …and one at the next key of the root after it, if there is one before the next cut.
        var complete: [Cut] = []
        var nextRoot = 0
        for (index, cut) in cuts.enumerated() {
            complete.append(cut)
            guard cut.column == 2 else { continue }
            let end = index + 1 < cuts.count ? cuts[index + 1].start : count
            while nextRoot < keysAtRoot.count, keysAtRoot[nextRoot].start <= cut.start { nextRoot += 1 }
            if nextRoot < keysAtRoot.count, keysAtRoot[nextRoot].start < end { complete.append(keysAtRoot[nextRoot]) }
        }
        return complete.count > 1 ? complete : nil
    }

    /// A byte a plain or quoted key can start with in block context: not a space or a line
    /// break, and not an indicator that starts something else (a sequence entry, a comment,
    /// an explicit key, a flow collection, an anchor, alias or tag, a block scalar, a
    /// directive, a reserved character).
    static func isKeyStart(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "-"), UInt8(ascii: "#"), UInt8(ascii: "?"), UInt8(ascii: ":"),
             UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"),
             UInt8(ascii: "!"), UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "|"), UInt8(ascii: ">"),
             UInt8(ascii: "%"), UInt8(ascii: "@"), UInt8(ascii: "`"):
            false
        default:
            true
        }
    }
}
