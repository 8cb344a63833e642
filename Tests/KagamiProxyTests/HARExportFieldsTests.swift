import Foundation
import KagamiFlow
import KagamiHAR
import KagamiJSON
import KagamiTesting
import Testing

@Suite("HAR export")
struct HARExportFieldsTests {
    @Test func harExportHasTheFieldsHARDefines() throws {
        let flows = [FlowFixtures.getJSON(), FlowFixtures.postBinary(size: 16), FlowFixtures.refused()]
        let har = HARExport.archive(flows, creatorVersion: "test")
        let text = har.serialized(.prettyPrinted)
        let parsed = try JSONValue(parsing: text)
        let log = try #require(parsed["log"])
        #expect(log["version"] == "1.2")
        let entries = try #require(log["entries"]?.arrayValue)
        #expect(entries.count == 3)

        let get = entries[0]
        #expect(get["startedDateTime"] == "2026-05-28T20:26:40.000Z")
        #expect(get["time"]?.doubleValue == 60)
        #expect(get["request"]?["url"] == "http://api.example.com/users/1")
        #expect(get["request"]?["cookies"]?[1]?["name"] == "theme")
        #expect(get["response"]?["content"]?["text"] == #"{"id":1,"name":"Ada"}"#)
        #expect(get["response"]?["cookies"]?[0]?["httpOnly"] == true)
        #expect(get["timings"]?["wait"]?.doubleValue == 39)
        #expect(get["serverIPAddress"] == "93.184.216.34")

        let post = entries[1]
        #expect(post["request"]?["url"] == "http://upload.example.com:8080/files?name=a%20b&x=1")
        #expect(post["request"]?["queryString"]?[0] == ["name": "name", "value": "a b"])
        #expect(post["request"]?["bodySize"] == 16)
        #expect(post["response"]?["content"]?["encoding"] == "base64")

        #expect(entries[2]["_error"]?.isJSONEqual(to: ["message": "connection refused by 127.0.0.1:1", "kind": "connectionRefused"]) == true)
    }
}
