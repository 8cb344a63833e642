import ArgumentParser
import Foundation
import KagamiFlow
import KagamiOutput
import KagamiPostgresStore
import KagamiStore

/// `kagami serve token add|list|remove`: the tokens with which the users of a shared store
/// reach `kagami serve` beyond loopback, kept in the store (hashed).
struct ServeTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Give the users of a shared store tokens for kagami serve, with read or write rights.",
        subcommands: [Add.self, List.self, Remove.self]
    )

    enum Right: String, EnumerableFlag {
        case read, write

        static func help(for value: Right) -> ArgumentHelp? {
            switch value {
            case .read: "Browse and export sessions."
            case .write: "Also import into sessions and delete from them."
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a token for a user and print it, once: the store keeps only its SHA-256.")

        @Argument(help: "Whom the token is for (one token per name).")
        var name: String

        @Flag(exclusivity: .exclusive)
        var right: Right

        @OptionGroup var store: ServeStoreOption

        func run() async throws {
            let catalog = try await store.catalog()
            let secret: String
            do {
                secret = try await catalog.addToken(
                    name: name, right: right == .read ? .read : .write, createdBy: RecordingStore.recorder())
            } catch {
                await catalog.close()
                throw ValidationError("\(error)")
            }
            await catalog.close()
            Console.error("Token of \(name) (\(right.rawValue)) for kagami serve at \(catalog.location); it is not shown again:\n")
            try Console.answer("\(secret)\n")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the tokens: name, right, who made it and when.")

        @OptionGroup var store: ServeStoreOption

        func run() async throws {
            let catalog = try await store.catalog()
            let tokens: [AccessToken]
            do {
                tokens = try await catalog.tokens()
            } catch {
                await catalog.close()
                throw ValidationError("\(error)")
            }
            await catalog.close()
            let formatter = ISO8601DateFormatter()
            let lines = tokens.map { "\($0.name)\t\($0.right.rawValue)\t\($0.createdBy)\t\(formatter.string(from: $0.createdAt))\n" }
            try Console.answer(lines.joined())
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user's token; kagami serve refuses it within 10 seconds.")

        @Argument(help: "Whose token to remove.")
        var name: String

        @OptionGroup var store: ServeStoreOption

        func run() async throws {
            let catalog = try await store.catalog()
            let removed: Bool
            do {
                removed = try await catalog.removeToken(name: name)
            } catch {
                await catalog.close()
                throw ValidationError("\(error)")
            }
            await catalog.close()
            guard removed else { throw ValidationError("\(catalog.location) has no token named \(name)") }
            Console.error("Removed the token of \(name).\n")
        }
    }
}

/// The store `kagami serve` and its `token` subcommands work on.
struct ServeStoreOption: ParsableArguments {
    @Option(name: .customLong("store"), help: ArgumentHelp(
        "The PostgreSQL database the team records into (postgres://user@host/database). See docs/TEAM.md.", valueName: "url"))
    var storeURL: String

    func catalog() async throws -> PostgresSessionCatalog {
        let location = try RecordingStore.location(storeURL)
        do {
            return try await PostgresSessionCatalog.open(location)
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
