// The documents `kagami proxy` keeps in files: rules, the SSL Proxying list, breakpoints.
import ArgumentParser
import Foundation
import KagamiJSON
import KagamiProxy
import KagamiRules
import KagamiUI

enum RulesFile {
    /// Reads and compiles a rules document; errors name the file, line and field.
    static func load(_ path: String) throws -> RulePipeline {
        let expanded = SessionFile.expand(path)
        do {
            let document = try RuleSet(contentsOf: expanded)
            return try RulePipeline(document, baseDirectory: (expanded as NSString).deletingLastPathComponent)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// What the admin API uses to read and replace the rules. Relative Map Local paths start at
    /// the rules file's directory (the working directory without one). With `saving`, a
    /// replaced document is written back to the file first, atomically; a failed write keeps
    /// the rules in force unchanged.
    static func control(_ active: ActiveRules, file: String?, saving: Bool) -> RulesControl {
        let baseDirectory = file.map { ($0 as NSString).deletingLastPathComponent } ?? FileManager.default.currentDirectoryPath
        let lock = NSLock()
        return RulesControl(
            current: { active.current?.rules ?? RuleSet() },
            replace: { rules in
                let pipeline = try RulePipeline(rules, baseDirectory: baseDirectory)
                try lock.withLock {
                    if saving, let file { try save(rules, to: file) }
                    active.replace(with: pipeline)
                }
            })
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
