import Foundation
import KagamiFlow
import Testing

/// A body's bytes may be held in several parts; it is the same body whichever way it is cut.
@Suite struct FlowBodyTests {
    private func parts(_ sizes: [Int]) -> (FlowBody, Data) {
        var body = FlowBody()
        var whole = Data()
        for (index, size) in sizes.enumerated() {
            let part = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
            body.append(part)
            whole.append(part)
        }
        body.size = whole.count
        return (body, whole)
    }

    @Test func partsJoinIntoTheBody() {
        let (body, whole) = parts([5, 0, 70_000, 1, 300])
        #expect(body.parts.count == 4, "an empty part is not kept")
        #expect(body.keptCount == whole.count)
        #expect(body.data == whole)
        #expect(body == FlowBody(data: whole), "equal however the bytes are cut")
        #expect(body.hashValue == FlowBody(data: whole).hashValue)
        #expect(body != FlowBody(data: whole.dropLast() + Data([0xFF])))
        var replaced = body
        replaced.data = Data([1, 2, 3])
        #expect(replaced.parts == [Data([1, 2, 3])] && replaced.keptCount == 3 && replaced.size == whole.count)
    }

    @Test func copiedBytesGatherInTheLastCopiedPart() {
        var body = FlowBody()
        let shared = Data(repeating: 9, count: 40_000)
        for byte in [UInt8(1), 2, 3] { [byte, byte].withUnsafeBytes { body.append(copying: $0) } }
        body.append(shared)
        [UInt8(4)].withUnsafeBytes { body.append(copying: $0) }
        [UInt8(5)].withUnsafeBytes { body.append(copying: $0) }
        #expect(body.parts == [Data([1, 1, 2, 2, 3, 3]), shared, Data([4, 5])])
        #expect(body.keptCount == 6 + 40_000 + 2)
    }

    /// Encoded, a body is its bytes whole, as it always was.
    @Test func encodesItsBytesWhole() throws {
        let (body, whole) = parts([3, 4_000, 10])
        let json = try JSONEncoder().encode(body)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["data"] as? String == whole.base64EncodedString())
        #expect(object["size"] as? Int == whole.count && object["isTruncated"] as? Bool == false)
        #expect(try JSONDecoder().decode(FlowBody.self, from: json) == body)
    }
}
