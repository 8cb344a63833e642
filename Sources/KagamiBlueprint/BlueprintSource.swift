// The Blueprint text as lines over one UTF-8 buffer, and the Markdown list structure on top.
import KagamiContract

/// One physical line: byte range without the line break, and its indentation in columns.
struct SourceLine {
    var start: Int
    var end: Int
    /// Byte offset of the first non-blank character (== end for a blank line).
    var contentStart: Int
    /// Columns of leading whitespace; a tab counts to the next multiple of 4.
    var indent: Int
    var isBlank: Bool { contentStart == end }
}

struct BlueprintSource {
    let bytes: [UInt8]
    private(set) var lines: [SourceLine] = []

    init(_ text: String) {
        var bytes = Array(text.utf8)
        // A byte-order mark is not content.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
        lines.reserveCapacity(bytes.count / 24)
        var start = 0
        let count = bytes.count
        bytes.withUnsafeBufferPointer { buffer in
            while start < count {
                var end = start
                while end < count, buffer[end] != 0x0A, buffer[end] != 0x0D { end += 1 }
                var indent = 0
                var content = start
                while content < end {
                    let byte = buffer[content]
                    if byte == 0x20 { indent += 1 } else if byte == 0x09 { indent = (indent / 4 + 1) * 4 } else { break }
                    content += 1
                }
                lines.append(SourceLine(start: start, end: end, contentStart: content, indent: indent))
                if end < count, buffer[end] == 0x0D { end += 1 }
                if end < count, buffer[end] == 0x0A { end += 1 }
                start = end
            }
        }
    }

    func text(_ from: Int, _ to: Int) -> String {
        String(decoding: bytes[from..<to], as: UTF8.self)
    }

    /// The line without its indentation and trailing blanks.
    func content(_ index: Int) -> String {
        let line = lines[index]
        var end = line.end
        while end > line.contentStart, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return text(line.contentStart, end)
    }

    func location(line index: Int) -> SourceLocation {
        guard index < lines.count else {
            return SourceLocation(line: lines.count + 1, column: 1, offset: bytes.count, length: 0)
        }
        let line = lines[index]
        return SourceLocation(
            line: index + 1, column: line.contentStart - line.start + 1,
            offset: line.contentStart, length: line.end - line.contentStart)
    }

    /// Lines `range` as one text block with `strip` columns of indentation removed from each,
    /// leading and trailing blank lines dropped, and a final line break (as drafter keeps it).
    func block(_ range: Range<Int>, strip: Int) -> String {
        var first = range.lowerBound
        var last = range.upperBound
        while first < last, lines[first].isBlank { first += 1 }
        while last > first, lines[last - 1].isBlank { last -= 1 }
        guard first < last else { return "" }
        var out = [UInt8]()
        for index in first..<last {
            let line = lines[index]
            var position = line.start
            var column = 0
            while position < line.end, column < strip {
                let byte = bytes[position]
                if byte == 0x20 { column += 1 } else if byte == 0x09 { column = (column / 4 + 1) * 4 } else { break }
                position += 1
            }
            out.append(contentsOf: bytes[position..<line.end])
            out.append(0x0A)
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A Markdown list item: its first line's text and the lines nested under it.
struct ListItem {
    /// Index of the item's own line.
    var line: Int
    var indent: Int
    /// The text after the list marker, trimmed.
    var text: String
    /// Lines after the item line that belong to it (content and nested lists).
    var body: Range<Int>
}

/// What a range of lines holds at one nesting level: leading text, then sibling list items.
struct ListLevel {
    var leading: Range<Int>
    var items: [ListItem]
}

extension BlueprintSource {
    /// The byte of a list marker (`+`, `-`, `*`) followed by a blank, if the line starts with one.
    func isListItem(_ index: Int) -> Bool {
        let line = lines[index]
        guard line.contentStart < line.end else { return false }
        let marker = bytes[line.contentStart]
        guard marker == 0x2B || marker == 0x2D || marker == 0x2A else { return false }
        let next = line.contentStart + 1
        return next == line.end || bytes[next] == 0x20 || bytes[next] == 0x09
    }

    /// Splits `range` into leading text and the list items at the shallowest level.
    /// Lines indented `codeIndent` columns or more are a code block at this level, never items.
    func listLevel(_ range: Range<Int>, codeIndent: Int) -> ListLevel {
        var leadingEnd = range.upperBound
        var items: [ListItem] = []
        var siblingIndent = Int.max
        for index in range {
            let line = lines[index]
            if line.isBlank { continue }
            if line.indent < codeIndent, line.indent <= siblingIndent, isListItem(index) {
                if items.isEmpty { leadingEnd = index }
                if var previous = items.popLast() {
                    previous.body = previous.body.lowerBound..<index
                    items.append(previous)
                }
                siblingIndent = min(siblingIndent, line.indent)
                var text = content(index)
                text.removeFirst()
                items.append(ListItem(line: index, indent: line.indent, text: text.trimmedBlanks, body: (index + 1)..<range.upperBound))
            }
        }
        return ListLevel(leading: range.lowerBound..<leadingEnd, items: items)
    }

    /// The items nested directly under `item`.
    func children(of item: ListItem) -> ListLevel {
        listLevel(item.body, codeIndent: item.indent + 8)
    }

    /// The text nested under `item` before its first child item: a code block (indented 8
    /// columns past the item's marker) or plain text. `indented` tells whether every line of
    /// it is indented that far (a block whose later lines fall back is text drafter warns about).
    /// `firstLine` and `strip` say where the text starts in the document and how many columns
    /// of indentation each line lost, to place problems found inside it.
    func nestedText(of item: ListItem) -> (text: String, indented: Bool, firstLine: Int, strip: Int) {
        let level = children(of: item)
        guard let first = level.leading.first(where: { !lines[$0].isBlank }) else { return ("", true, item.line, 0) }
        let codeIndent = item.indent + 8
        let strip = lines[first].indent >= codeIndent ? codeIndent : lines[first].indent
        let indented = level.leading.allSatisfy { lines[$0].isBlank || lines[$0].indent >= codeIndent }
        return (block(level.leading, strip: strip), indented, first, strip)
    }

    /// The position of `line`:`column` of a text block that starts at `firstLine` with `strip`
    /// columns of indentation taken off each line (tabs taken as 4 columns, as indentation is).
    func location(inBlockAt firstLine: Int, strip: Int, line: Int, column: Int) -> SourceLocation {
        let index = firstLine + line - 1
        guard index >= 0, index < lines.count else { return location(line: min(max(index, 0), lines.count)) }
        let sourceLine = lines[index]
        var position = sourceLine.start
        var columns = 0
        while position < sourceLine.end, columns < strip {
            let byte = bytes[position]
            if byte == 0x20 { columns += 1 } else if byte == 0x09 { columns = (columns / 4 + 1) * 4 } else { break }
            position += 1
        }
        let offset = min(position + column - 1, sourceLine.end)
        return SourceLocation(line: index + 1, column: offset - sourceLine.start + 1, offset: offset, length: 1)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmedBlanks: String {
        if let first = first, let last = last, first != " ", first != "\t", last != " ", last != "\t" {
            return String(self)
        }
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
