// The documents `kagami proxy` keeps in files: rules, the SSL Proxying list, breakpoints.
import ArgumentParser
import Foundation
import KagamiCertificates
import KagamiJSON
import KagamiControl
import KagamiGRPC
import KagamiProxy
import KagamiRules
import KagamiUI

enum RulesFile {
    /// Reads and compiles a rules document; errors name the file, line and field. Map Local
    /// uses `mapLocalFolders`, by default the rules file's folder, and answers gRPC calls with
    /// `grpcSchemas`' types.
    static func load(_ path: String, mapLocalFolders: MapLocalFolders? = nil, grpcSchemas: GRPCSchemas = GRPCSchemas()) throws -> RulePipeline {
        let expanded = SessionFile.expand(path)
        do {
            let document = try RuleSet(contentsOf: expanded)
            return try RulePipeline(
                document, mapLocalFolders: try mapLocalFolders ?? Self.mapLocalFolders(rulesFile: path, roots: []), grpcSchemas: grpcSchemas)
        } catch var error as RuleDocumentError {
            if error.file == "rules" { error.file = expanded }
            throw ValidationError("\(error)")
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The folders Map Local may use in `kagami proxy`: the rules file's folder (where relative
    /// paths start), each `--map-local-root`, and without either `$KAGAMI_HOME/map-local`;
    /// never the rest of Kagami's own folder, which holds its CA key and admin token.
    static func mapLocalFolders(rulesFile: String?, roots: [String]) throws -> MapLocalFolders {
        let home = KagamiHome.path
        let ownFolder = (home as NSString).appendingPathComponent(MapLocalFolders.openFolderName)
        let given = roots.map(SessionFile.expand)
        let rulesFolder = rulesFile.map { (SessionFile.expand($0) as NSString).deletingLastPathComponent }
        let folders = MapLocalFolders(base: rulesFolder ?? given.first ?? ownFolder, roots: given, excluding: [home])
        // A folder named with --map-local-root that opens nothing is a mistake worth a word; the
        // rules file's own folder may lie anywhere (its Map Local rules are refused one by one).
        let named = Set(given.map { MapLocalFolders(base: $0, excluding: []).base })
        if let closed = folders.closedRoots.first(where: named.contains) {
            throw ValidationError("--map-local-root \(closed) is inside Kagami's own folder \(home), where Map Local never reads (it holds the CA key and the admin token): use a folder of your own, or \(ownFolder)")
        }
        return folders
    }

    /// What the admin API uses to read and replace the rules. With `saving`, a replaced document
    /// is written back to the file first, atomically; a failed write keeps the rules in force
    /// unchanged.
    static func control(
        _ active: ActiveRules, file: String?, saving: Bool, mapLocalFolders: MapLocalFolders, grpcSchemas: GRPCSchemas = GRPCSchemas()
    ) -> RulesControl {
        let lock = NSLock()
        return RulesControl(
            current: { active.current?.rules ?? RuleSet() },
            replace: { rules in
                let pipeline = try RulePipeline(rules, mapLocalFolders: mapLocalFolders, grpcSchemas: grpcSchemas)
                try lock.withLock {
                    if saving, let file { try save(rules, to: file) }
                    active.replace(with: pipeline)
                }
            },
            mapLocalFolders: mapLocalFolders)
    }

    /// Writes `rules` in the file's own format (JSON for `.json`, YAML otherwise), through a
    /// temporary file renamed over it, so a crash never leaves half a document.
    static func save(_ rules: RuleSet, to path: String) throws {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        let text = target.pathExtension.lowercased() == "json" ? try rules.jsonText() + "\n" : try rules.yamlText()
        try Data(text.utf8).write(to: target, options: .atomic)
    }
}

/// The SSL Proxying list kept in a JSON file (`--ssl-proxying-file`), like the rules file.
enum SSLProxyingFile {
    static func load(_ path: String) throws -> SSLProxyingList {
        do {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            return try SSLProxyingList(json: try JSONValue(parsing: text))
        } catch {
            throw ValidationError("--ssl-proxying-file \(path): \(error)")
        }
    }
}

enum BreakpointsFile {
    static func load(_ path: String) throws -> BreakpointSettings {
        do {
            return try BreakpointSettings(contentsOf: SessionFile.expand(path))
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
