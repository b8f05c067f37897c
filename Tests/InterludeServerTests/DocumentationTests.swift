import Foundation
import Testing

/// The documentation keeps up with the code: every setting the server reads is in docs/configuration.md, and every
/// command of the executable is named in README's map of the docs.
@Suite("Documentation: settings and commands")
struct DocumentationTests {
    static let root = SourceSafetyTests.sources.deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every variable name Settings.swift reads (each quoted in capitals), and the resources' place.
    static func settingNames() throws -> Set<String> {
        let settings = try text("Sources/InterludeServer/App/Settings.swift")
        let names = settings.matches(of: try Regex(#""([A-Z][A-Z0-9]*_[A-Z0-9_]+|PORT|HOST)""#))
            .compactMap { $0.output[1].substring.map(String.init) }
        let resources = try text("Sources/InterludeCore/ResourceLocation.swift")
            .matches(of: try Regex(#"environment\["([A-Z_]+)"\]"#)).compactMap {
                $0.output[1].substring.map(String.init)
            }
        return Set(names + resources)
    }

    @Test("every setting the server reads is documented in docs/configuration.md")
    func settings() throws {
        let names = try Self.settingNames()
        let configuration = try Self.text("docs/configuration.md")
        #expect(names.count > 30, "the settings were found: \(names.sorted())")
        for name in names.sorted() {
            #expect(configuration.contains("`\(name)`"), "\(name) is read but not in docs/configuration.md")
        }
    }

    @Test("every command of the executable is named in README's map and described in docs/commands.md")
    func commands() throws {
        // The server's commands, and the benchmark the executable adds from a target of its own.
        let startup =
            try Self.text("Sources/InterludeServer/App/Startup.swift") + Self.text("Sources/interlude/main.swift")
        let commands =
            startup.matches(of: try Regex(#"Commands\.use\([A-Za-z]+\(\), as: "([a-z-]+)"\)"#))
            .compactMap { $0.output[1].substring.map(String.init) } + ["serve"]
        let readme = try Self.text("README.md")
        let described = try Self.text("docs/commands.md")
        #expect(commands.count >= 10, "the commands were found: \(commands)")
        for command in commands {
            #expect(readme.contains("`\(command)"), "README's map does not name `\(command)`")
            #expect(
                described.contains("`interlude \(command)"), "docs/commands.md does not describe `interlude \(command)`"
            )
        }
    }
}
