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

    /// The regular expressions of the patient app's JavaScript, each run in the person's own browser over a short
    /// text, and each without a quantifier that could backtrack (one quantifier over a class or a literal).
    static let allowedExpressions: Set<String> = [
        "js/lib/push.js /-/g", "js/lib/push.js /_/g", "js/lib/calendar.js /^(\\d{2}):(\\d{2})$/",
        "js/lib/navigation.js /[\\t\\n\\r]/g", "js/lib/questionnaire.js /^answers\\./",
        "js/pages/therapist.js /[^0-9+]/g",
        "js/pages/appointments.js /^https?:/", "js/pages/studies.js /\\n\\s*\\n/", "js/pages/events.js /\\s+/",
        "js/pages/questionnaire.js /[^+0-9]/g", "js/pages/thoughts.js /\\s+/",
        "js/pages/audiograms.js /^points\\.(\\d+)\\./",
    ]

    @Test("no regular expression in the server's or the SDK's Swift; in the patient app only those named")
    func regularExpressions() throws {
        // REDCap branching split with \s+and\s+ once held a thread for minutes on 32 000 spaces: input is read by
        // hand, in one pass.
        let markers = [
            "NSRegularExpression", ".regularExpression", "Regex(", "Regex<", "firstMatch(of:", "wholeMatch(of:",
        ]
        for (path, text) in try Self.swiftFiles() {
            for marker in markers { #expect(!text.contains(marker), "\(path) uses a regular expression (\(marker))") }
            // An extended literal `#/…/#`; a JSON reference inside a string ("#/components/…") is none.
            let literals = text.components(separatedBy: "#/").count - text.components(separatedBy: "\"#/").count
            #expect(literals == 0, "\(path) holds a regular expression literal")
        }
        let publicFiles = Self.sources.deletingLastPathComponent().appendingPathComponent("Public")
        let enumerator = try #require(FileManager.default.enumerator(at: publicFiles, includingPropertiesForKeys: nil))
        // A literal after an operator or an opening bracket, with a metacharacter or flags.
        let literal = try Regex(
            #"(?:^|[=(,:!&|?{};\[]|return)\s*(/(?:\\.|\[(?:\\.|[^\]])*\]|[^/\\\n\[*])(?:\\.|\[(?:\\.|[^\]])*\]|[^/\\\n\[])*/[a-z]*)"#
        )
        var found: Set<String> = []
        for case let url as URL in enumerator where url.pathExtension == "js" {
            let relative = String(url.path.dropFirst(publicFiles.path.count + 1))
            for match in try String(contentsOf: url, encoding: .utf8).matches(of: literal) {
                guard let expression = match.output[1].substring.map(String.init) else { continue }
                // A path in a template string (`/app/profile`) ends in letters no regular expression takes as flags.
                let flags = expression.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
                guard flags.allSatisfy({ "dgimsuy".contains($0) }) else { continue }
                if !flags.isEmpty || expression.contains(where: { "\\^$.*+?()[]{}|".contains($0) }) {
                    found.insert("\(relative) \(expression)")
                }
            }
        }
        #expect(found.count >= 10)
        #expect(found.subtracting(Self.allowedExpressions).sorted() == [], "regular expressions not named here")
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
