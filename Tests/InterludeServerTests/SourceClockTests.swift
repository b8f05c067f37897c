import Foundation
import Testing

/// Time comes from the injected clock, so tests can stand at any instant and two readings in one request agree.
@Suite("Sources: one clock")
struct SourceClockTests {
    /// The system clock itself is the one place that reads the time: the server's, and the SDK's for native apps.
    static let clockFiles: Set = ["InterludeServer/Infrastructure/WallClock.swift", "InterludeKit/SystemTime.swift"]

    @Test("no Date() outside the injected clock")
    func oneClock() throws {
        let files = try SourceSafetyTests.swiftFiles()
        #expect(files.count > 100)
        for (path, text) in files where !Self.clockFiles.contains(path) {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                #expect(!code.contains("Date()"), "\(path):\(number + 1) reads the time past the clock")
            }
        }
    }
}
