/// A channel's reads held while what they would bring can't go on (the other side is full, the
/// exchange waits at a breakpoint): a read asked for while closed waits, and is asked again when
/// the gate opens. The handler issues the read itself, outside any access to the gate: a read
/// can deliver data at once, and that data may close the gate again.
struct ReadGate {
    private(set) var isClosed = false
    private var readPending = false

    /// Whether a read asked for now goes ahead; while closed it waits for `open()`.
    mutating func admit() -> Bool {
        if isClosed { readPending = true }
        return !isClosed
    }

    mutating func close() { isClosed = true }

    /// Opens the gate; true when a read waited and should be issued now.
    mutating func open() -> Bool {
        isClosed = false
        defer { readPending = false }
        return readPending
    }
}
