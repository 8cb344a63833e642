import Foundation
import KagamiFlow
import Testing

/// Flow ids are version 7 UUIDs (RFC 9562 §5.7): their text sorts as they were made.
@Suite struct TimeOrderedUUIDTests {
    @Test func carriesTheTimeTheVersionAndTheVariant() {
        // 2024-01-02T03:04:05.678Z, and a quarter of the next millisecond.
        let date = Date(timeIntervalSince1970: 1_704_164_645.678_25)
        let id = UUID.timeOrdered(at: date)
        let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
        let milliseconds = bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(milliseconds == 1_704_164_645_678)
        #expect(bytes[6] >> 4 == 7, "version")
        #expect(bytes[8] >> 6 == 0b10, "variant")
        // The rest of the millisecond in 12 bits: a quarter is about 1024 of 4096.
        let fraction = Int(bytes[6] & 0x0F) << 8 | Int(bytes[7])
        #expect(abs(fraction - 1024) <= 2, "\(fraction)")
        #expect(id.uuidString.dropFirst(14).first == "7")
        // Foundation reads it back as it was written.
        #expect(UUID(uuidString: id.uuidString) == id)
    }

    @Test func sortsInTheOrderOfItsTimesAndIsUnique() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        // 20,000 ids, 0.1 ms apart (several share a millisecond, none shares a 1/4096 of one).
        let ids = (0..<20_000).map { UUID.timeOrdered(at: start.addingTimeInterval(Double($0) / 10_000)) }
        let texts = ids.map(\.uuidString)
        #expect(texts == texts.sorted())
        #expect(Set(ids).count == ids.count)
        // Made at the same instant they differ in their random bits.
        let twins = (0..<1_000).map { _ in UUID.timeOrdered(at: start) }
        #expect(Set(twins).count == twins.count)
    }

    @Test func aFlowWithoutAnIDGetsOneForItsStart() {
        let start = Date(timeIntervalSince1970: 1_750_000_000.25)
        let flow = Flow(mode: .reverse, request: FlowRequest(method: "GET", scheme: "http", host: "api.local", port: 80, target: "/"), timings: FlowTimings(start: start))
        let bytes = withUnsafeBytes(of: flow.id.uuid) { Array($0) }
        #expect(bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } == 1_750_000_000_250)
    }
}

@Suite struct UUIDTextTests {
    @Test func canonicalTextIsWhatFoundationWrites() {
        let fixed = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
            UUID(uuid: (0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10)),
        ]
        for id in fixed + (0..<1_000).map({ _ in UUID() }) + (0..<1_000).map({ _ in UUID.timeOrdered() }) {
            #expect(id.canonicalText == id.uuidString)
        }
        #expect(fixed[2].canonicalText == "01234567-89AB-CDEF-FEDC-BA9876543210")
    }

    @Test func canonicalTextReadsAsFoundationReadsIt() {
        for _ in 0..<1_000 {
            let id = UUID()
            #expect(UUID(canonicalText: id.uuidString) == id)
            #expect(UUID(canonicalText: id.uuidString.lowercased()) == id)
        }
        let wrong = [
            "", "01234567-89AB-CDEF-FEDC-BA987654321", "01234567-89AB-CDEF-FEDC-BA98765432100",
            "0123456789AB-CDEF-FEDC-BA9876543210-", "01234567+89AB-CDEF-FEDC-BA9876543210",
            "0123456G-89AB-CDEF-FEDC-BA9876543210", "01234567-89AB-CDEF-FEDC-BA987654321é",
            " 1234567-89AB-CDEF-FEDC-BA9876543210",
        ]
        for text in wrong {
            #expect(UUID(canonicalText: text) == nil, "\(text)")
        }
    }
}
