import Foundation
import Testing

/// Reads the sources for constructs that stop the process when they fail. A request must never reach one, so the
/// few that exist guard programming errors only and are named here with the reason; a new one fails this test.
@Suite("Sources: nothing a request reaches may trap")
struct SourceSafetyTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Files allowed one `fatalError`: reading a service before `configure` ran is a programming error.
    static let fatalErrorAllowed: Set<String> = [
        "InterludeServer/App/AppServices.swift", "InterludeServer/Infrastructure/Push/NotificationChannels.swift",
    ]

    static func swiftFiles() throws -> [(path: String, text: String)] {
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var files: [(String, String)] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(sources.path.count + 1))
            files.append((relative, try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test("no try!, no precondition, and fatalError only where named")
    func noTraps() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 100)
        for (path, text) in files {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                #expect(!code.contains("try!"), "\(path):\(number + 1) uses try!")
                #expect(!code.contains("precondition("), "\(path):\(number + 1) uses precondition")
                #expect(!code.contains("preconditionFailure("), "\(path):\(number + 1) uses preconditionFailure")
                if code.contains("fatalError(") {
                    #expect(Self.fatalErrorAllowed.contains(path), "\(path):\(number + 1) uses fatalError")
                }
            }
        }
    }

    @Test("numbers become text and integers only through the total conversions of InterludeCore")
    func numberConversions() throws {
        // String(Int(x)) of a Double traps for NaN, infinities and anything beyond Int's range.
        for (path, text) in try Self.swiftFiles() where path != "InterludeCore/Validation/Numbers.swift" {
            let throughInt = text.contains("String(Int(") || text.contains("String(Int64(")
            #expect(!throughInt, "\(path) turns a number into text through Int(_:)")
        }
    }
}
