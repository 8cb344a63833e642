import KagamiRules
import NIOCore
import KagamiTesting
import Testing
@testable import KagamiProxy

/// The engine's side of throttling: what leaves when, how much may wait, what gets lost.
@Suite struct ThrottleQueueTests {
    let oneMbps = ThrottleProfile(name: "1 Mbps", downloadKbps: 1000, uploadKbps: 500)

    func bytes(_ count: Int) -> ByteBuffer { ByteBuffer(repeating: 0x61, count: count) }

    @Test func readsFromTheServerLeaveInMTUChunksAtTheirInstants() {
        var random = SeededGenerator(state: 7)
        var queue = ThrottleQueue<ManualClock, Never>(clock: ManualClock(), direction: .download)
        queue.shape(oneMbps)
        // Two 3,000-byte reads arriving together: four 1,500-byte chunks, 12 ms apart.
        queue.enqueue(bytes(3000), tag: nil, now: ManualClock.at(.zero))
        queue.enqueue(bytes(3000), tag: nil, now: ManualClock.at(.zero))
        #expect(queue.nextRelease == ManualClock.at(.milliseconds(12)))
        #expect(queue.takeDue(at: ManualClock.at(.microseconds(11_999)), using: &random).chunks.isEmpty)
        let first = queue.takeDue(at: ManualClock.at(.milliseconds(12)), using: &random)
        #expect(first.chunks.map(\.bytes.readableBytes) == [1500])
        #expect(!first.lost)
        let rest = queue.takeDue(at: ManualClock.at(.milliseconds(48)), using: &random)
        #expect(rest.chunks.map(\.releaseAt) == [12 * 2, 12 * 3, 12 * 4].map { ManualClock.at(.milliseconds($0)) })
        #expect(queue.isEmpty && queue.backlog == 0)
    }

    @Test func oneMegabyteReadInPiecesEndsAtEightSecondsAndTheBacklogIsBounded() {
        var random = SeededGenerator(state: 7)
        var queue = ThrottleQueue<ManualClock, Never>(clock: ManualClock(), direction: .download)
        queue.shape(oneMbps)
        var now = ManualClock.at(.zero)
        var sent = 0
        var last: ManualClock.Instant?
        var largestBacklog = 0
        // The link reads 16 KiB at a time, and only while the queue isn't paused.
        while sent < 1_000_000 || !queue.isEmpty {
            if !queue.isPaused, sent < 1_000_000 {
                let piece = min(16_384, 1_000_000 - sent)
                queue.enqueue(bytes(piece), tag: nil, now: now)
                sent += piece
                largestBacklog = max(largestBacklog, queue.backlog)
                continue
            }
            guard let next = queue.nextRelease else { break }
            now = next
            let due = queue.takeDue(at: now, using: &random)
            #expect(due.chunks.allSatisfy { $0.bytes.readableBytes <= 1500 && $0.releaseAt == now })
            last = due.chunks.last?.releaseAt ?? last
        }
        #expect(last == ManualClock.at(.seconds(8)))
        #expect(largestBacklog <= 64 * 1024 + 16_384)
    }

    @Test func uploadUsesTheUploadRateAndTheWritePromiseRidesOnTheLastChunk() {
        var random = SeededGenerator(state: 7)
        var queue = ThrottleQueue<ManualClock, Int>(clock: ManualClock(), direction: .upload)
        queue.shape(oneMbps)
        queue.enqueue(bytes(4000), tag: 1, now: ManualClock.at(.zero))
        let due = queue.takeDue(at: ManualClock.at(.seconds(1)), using: &random).chunks
        #expect(due.map(\.bytes.readableBytes) == [1500, 1500, 1000])
        #expect(due.map(\.tag) == [nil, nil, 1])
        // 4,000 bytes at 500 kbps: 64 ms.
        #expect(due.last?.releaseAt == ManualClock.at(.milliseconds(64)))
    }

    @Test func pausesAboveTheHighMarkAndResumesBelowTheLowOne() {
        var random = SeededGenerator(state: 7)
        var queue = ThrottleQueue<ManualClock, Never>(clock: ManualClock(), direction: .download, pauseAbove: 6000, resumeBelow: 3000)
        queue.shape(oneMbps)
        queue.enqueue(bytes(6000), tag: nil, now: ManualClock.at(.zero))
        #expect(!queue.isPaused)
        queue.enqueue(bytes(1500), tag: nil, now: ManualClock.at(.zero))
        #expect(queue.isPaused)
        _ = queue.takeDue(at: ManualClock.at(.milliseconds(36)), using: &random)
        #expect(queue.backlog == 3000)
        #expect(!queue.isPaused)
    }

    @Test func aNewProfileNeverOvertakesBytesStillWaiting() {
        var random = SeededGenerator(state: 7)
        var queue = ThrottleQueue<ManualClock, Never>(clock: ManualClock(), direction: .download)
        queue.shape(oneMbps)
        queue.enqueue(bytes(1500), tag: nil, now: ManualClock.at(.zero))
        queue.shape(nil)
        queue.enqueue(bytes(10), tag: nil, now: ManualClock.at(.zero))
        let due = queue.takeDue(at: ManualClock.at(.milliseconds(12)), using: &random).chunks
        #expect(due.map(\.bytes.readableBytes) == [1500, 10])
        #expect(due.map(\.releaseAt) == [ManualClock.at(.milliseconds(12)), ManualClock.at(.milliseconds(12))])
    }

    @Test func reliabilityLosesMessagesLargeOnesMoreOften() {
        var random = SeededGenerator(state: 7)
        var lossy = oneMbps
        lossy.downloadKbps = 0
        lossy.reliability = 0
        var queue = ThrottleQueue<ManualClock, Never>(clock: ManualClock(), direction: .download)
        queue.shape(lossy)
        queue.enqueue(bytes(100), tag: nil, now: ManualClock.at(.zero))
        #expect(queue.takeDue(at: ManualClock.at(.zero), using: &random).lost)

        // 50% per 10 KiB: 10 KiB messages get through about half the time, 40 KiB ones about 1 in 16.
        lossy.reliability = 50
        func deliveredShare(size: Int, random: inout SeededGenerator) -> Double {
            var delivered = 0
            for _ in 0..<2000 {
                var queue = ThrottleQueue<ManualClock, Never>(clock: ManualClock(), direction: .download)
                queue.shape(lossy)
                queue.enqueue(bytes(size), tag: nil, now: ManualClock.at(.zero))
                if !queue.takeDue(at: ManualClock.at(.zero), using: &random).lost { delivered += 1 }
            }
            return Double(delivered) / 2000
        }
        let small = deliveredShare(size: 10240, random: &random)
        let large = deliveredShare(size: 40960, random: &random)
        #expect(abs(small - 0.5) < 0.05)
        #expect(abs(large - 0.0625) < 0.03)
    }
}
