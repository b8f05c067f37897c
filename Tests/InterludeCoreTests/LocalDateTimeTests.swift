import Foundation
import Testing

@testable import InterludeCore

@Suite("Wall-clock times across daylight-saving changes")
struct LocalDateTimeTests {
    let vienna = TimeZone(identifier: "Europe/Vienna")!
    let newYork = TimeZone(identifier: "America/New_York")!
    let lordHowe = TimeZone(identifier: "Australia/Lord_Howe")!

    func utc(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    @Test("an ordinary time is read in its zone and written back the same")
    func ordinary() throws {
        let local = try #require(LocalDateTime("2026-03-02T09:30"))
        #expect(local.instant(in: vienna) == utc("2026-03-02T08:30:00Z"))
        #expect(local.instant(in: newYork) == utc("2026-03-02T14:30:00Z"))
        #expect(LocalDateTime(local.instant(in: vienna), in: vienna) == local)
        #expect(local.description == "2026-03-02T09:30")
        #expect(LocalDateTime("2026-03-02T24:00") == nil)
        #expect(LocalDateTime("2026-03-02 09:30") == nil)
    }

    @Test("digits are padded as %0Nd pads them", arguments: [0, 1, 2, 3, 4])
    func paddedDigits(width: Int) {
        for value in [0, 7, 9, 10, 59, 99, 100, 999, 2026, 12_345, -1, -42, -2026, Int.max, Int.min] {
            var text = "x"
            text.appendDigits(value, width: width)
            #expect(text == "x" + String(format: "%0\(width)ld", value), "\(value)")
        }
        #expect(LocalDate(year: 987, month: 1, day: 2)?.description == "0987-01-02")
        #expect(LocalTime(hour: 7, minute: 5)?.description == "07:05")
    }

    @Test("a time skipped by the spring change moves forward by the gap")
    func skipped() throws {
        #expect(LocalDateTime("2026-03-29T02:30")!.instant(in: vienna) == utc("2026-03-29T01:30:00Z"))
        #expect(LocalDateTime("2026-03-08T02:30")!.instant(in: newYork) == utc("2026-03-08T07:30:00Z"))
        // Lord Howe jumps only 30 minutes, from 02:00 to 02:30.
        let shifted = LocalDateTime("2026-10-04T02:15")!.instant(in: lordHowe)
        #expect(LocalDateTime(shifted, in: lordHowe).description == "2026-10-04T02:45")
    }

    @Test("a time that happens twice in autumn takes its first occurrence")
    func ambiguous() throws {
        #expect(LocalDateTime("2026-10-25T02:30")!.instant(in: vienna) == utc("2026-10-25T00:30:00Z"))
        #expect(LocalDateTime("2026-11-01T01:30")!.instant(in: newYork) == utc("2026-11-01T05:30:00Z"))
        let lordHoweAutumn = LocalDateTime("2026-04-05T01:45")!.instant(in: lordHowe)
        #expect(lordHoweAutumn == utc("2026-04-04T14:45:00Z"))
    }
}
