// `HummingbirdBaseline PORT`: one GET route answering the same JSON body as the mock benchmark's description.
import Hummingbird

let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 3001 : 3001
let body = "{\n  \"id\": 1,\n  \"title\": \"Buy milk\"\n}\n"
let router = Router()
router.get("/notes/:id") { _, _ -> Response in
    Response(
        status: .ok,
        headers: [.contentType: "application/json"],
        body: .init(byteBuffer: ByteBuffer(string: body)))
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
