// Fetches one URL with Foundation's URLSession and prints "STATUS BYTES": a real URLSession
// client for the proxy tests, run as a child process so proxy variables apply to it alone.
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

guard CommandLine.arguments.count == 2, let url = URL(string: CommandLine.arguments[1]) else {
    FileHandle.standardError.write(Data("usage: url-session-probe URL\n".utf8))
    exit(2)
}
let configuration = URLSessionConfiguration.ephemeral
configuration.timeoutIntervalForRequest = 20
let session = URLSession(configuration: configuration)
do {
    let (data, response) = try await session.data(from: url)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    print("\(status) \(data.count)")
    exit(0)
} catch {
    FileHandle.standardError.write(Data("url-session-probe: \(error)\n".utf8))
    exit(1)
}
