import Foundation
@testable import KagamiStore
import Testing

@Suite("Checksum")
struct XXH64Tests {
    /// The checksum kept beside records and bodies is xxHash64 (seed 0), whatever pieces the
    /// bytes come in (a body's parts, a record's parts).
    @Test func theChecksumIsXXH64() {
        func checksum(_ text: String) -> UInt64 { XXH64.checksum([Data(text.utf8)]) }
        #expect(checksum("") == 0xEF46_DB37_51D8_E999)
        #expect(checksum("a") == 0xD24E_C4F1_A98C_6E5B)
        #expect(checksum("abc") == 0x44BC_2CF5_AD77_0999)
        #expect(checksum("Nobody inspects the spammish repetition") == 0xFBCE_A83C_8A37_8BF1)
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let whole = XXH64.checksum([bytes])
        for cuts in [[1], [31, 32, 33], [7, 64, 65, 99_999], [0, 50_000, 100_000]] {
            let bounds = [0] + cuts + [bytes.count]
            let pieces = zip(bounds, bounds.dropFirst()).map { Data(bytes[$0..<$1]) }
            #expect(XXH64.checksum(pieces) == whole, "cut at \(cuts)")
        }
    }
}
