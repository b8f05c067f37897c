import Foundation
import Testing

@testable import InterludeCore

@Suite("The calendar feed follows RFC 5545: escaped TEXT, folded lines, no control characters")
struct ICalendarTests {
    static func feed(title: String) -> String {
        ICalendar.render(
            calendarName: "Interlude",
            events: [
                ICalendar.Event(
                    uid: "a1", title: title, startsAt: Date(timeIntervalSince1970: 0),
                    endsAt: Date(timeIntervalSince1970: 3600),
                    description: nil, updatedAt: Date(timeIntervalSince1970: 0))
            ])
    }

    /// The logical SUMMARY line, unfolded as a reader does.
    static func summary(_ feed: String) -> String? {
        feed.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n").first {
            $0.hasPrefix("SUMMARY:")
        }
    }

    @Test(
        "text is escaped, and line breaks and control characters cannot start a property of their own",
        arguments: [
            ("Session; room 2, floor 1", "SUMMARY:Session\\; room 2\\, floor 1"),
            ("back\\slash", "SUMMARY:back\\\\slash"),
            ("one\r\nEND:VEVENT", "SUMMARY:one\\nEND:VEVENT"),
            ("bell\u{7}\u{0}and\u{1B}[31m", "SUMMARY:belland[31m"),
            ("tab\tkept", "SUMMARY:tab\tkept"),
        ])
    func escaped(title: String, line: String) {
        let feed = Self.feed(title: title)
        #expect(Self.summary(feed) == line)
        #expect(feed.components(separatedBy: "\r\n").filter { $0 == "END:VEVENT" }.count == 1)
    }

    @Test("every line is at most 75 octets, folded between characters, and unfolds to the original")
    func folded() {
        let title = String(repeating: "Kaffee ☕️ mit Anna 👩🏽‍⚕️ ", count: 12)
        let feed = Self.feed(title: title)
        #expect(feed.hasSuffix("\r\n"))
        for line in feed.components(separatedBy: "\r\n") {
            #expect(line.utf8.count <= 75, "\(line)")
        }
        #expect(Self.summary(feed) == "SUMMARY:" + ICalendar.escape(title))
    }
}
