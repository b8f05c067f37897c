import Foundation
import Testing

@testable import InterludeCore

@Suite("Study days, beeps and observations; compliance per day")
struct StudyTimelineTests {
    let vienna = "Europe/Vienna"
    let newYork = "America/New_York"

    func instant(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }

    @Test("day 1 is the local day of enrolment; beeps count within a local day, observations throughout")
    func numbering() {
        // setup: enrolled late in the evening, Vienna time; prompts given out of order
        let zones = ZoneHistory([(zone: vienna, since: instant("2026-01-01T00:00:00Z"))])
        let enrolled = instant("2026-03-02T22:30:00Z")  // 23:30 local, 2 March
        let scheduled = [
            instant("2026-03-03T17:00:00Z"), instant("2026-03-03T08:00:00Z"), instant("2026-03-02T22:45:00Z"),
            instant("2026-03-03T23:30:00Z"),  // 00:30 local on 4 March
        ]

        // act
        let numbers = OccurrenceNumber.number(scheduled, enrolledAt: enrolled, zones: zones)

        // verify
        #expect(
            numbers == [
                OccurrenceNumber(dayN: 2, beepN: 2, obsN: 3), OccurrenceNumber(dayN: 2, beepN: 1, obsN: 2),
                OccurrenceNumber(dayN: 1, beepN: 1, obsN: 1), OccurrenceNumber(dayN: 3, beepN: 1, obsN: 4),
            ])
    }

    @Test("after a move, days follow the new zone, across its daylight-saving change")
    func moveAcrossDaylightSaving() {
        // setup: Vienna until 7 March, then New York, which springs forward on 8 March 2026
        let zones = ZoneHistory([
            (zone: newYork, since: instant("2026-03-07T12:00:00Z")),
            (zone: vienna, since: instant("2026-02-01T00:00:00Z")),
        ])

        // act / verify
        #expect(zones.zone(at: instant("2026-03-07T11:59:59Z")).identifier == vienna)
        #expect(zones.zone(at: instant("2026-03-07T12:00:00Z")).identifier == newYork)
        #expect(zones.zone(at: instant("2026-01-01T00:00:00Z")).identifier == vienna)
        // 03:30 UTC on 9 March is 23:30 on 8 March in New York (EDT, UTC-4), 04:30 on 9 March in Vienna
        #expect(zones.localDate(of: instant("2026-03-09T03:30:00Z")) == LocalDate(year: 2026, month: 3, day: 8))
        #expect(zones.periods.map(\.until) == [instant("2026-03-07T12:00:00Z"), nil])
    }

    @Test("the same zone set twice is one period")
    func repeatedZone() {
        // act
        let zones = ZoneHistory([
            (zone: vienna, since: instant("2026-01-01T00:00:00Z")),
            (zone: vienna, since: instant("2026-02-01T00:00:00Z")),
        ])

        // verify
        #expect(zones.periods.count == 1)
        #expect(zones.periods[0].since == instant("2026-01-01T00:00:00Z"))
    }

    @Test("a day's rate is the share answered of those answered or closed; open ones are planned but not due")
    func compliance() {
        // setup
        var day = DayCompliance()

        // act
        for status: PromptStatus in [.completed, .completed, .expired, .open, .scheduled, .cancelled] {
            day.count(status)
        }

        // verify
        #expect(day.planned == 4)
        #expect(day.answered == 2)
        #expect(day.expired == 1)
        #expect(day.open == 1)
        #expect(day.rate == 2.0 / 3.0)
        #expect(DayCompliance().rate == nil)
    }
}
