import Foundation
import Testing

@testable import InterludeCore

@Suite("Periods of days and the session report's summaries")
struct SessionReportRulesTests {
    let vienna = TimeZone(identifier: "Europe/Vienna")!
    /// 2026-03-29 12:00 in Vienna, the day the clocks go forward.
    let now = Date(timeIntervalSince1970: 1_774_778_400)

    @Test("without dates a report covers the last 28 days up to today, in the person's zone, whole days only")
    func defaultPeriod() throws {
        let period = try DayPeriod.read(from: nil, to: nil, in: vienna, now: now, defaultDays: 28)
        #expect(period.from.description == "2026-03-02" && period.to.description == "2026-03-29")
        #expect(
            period.instants.lowerBound == Date(timeIntervalSince1970: 1_772_406_000), "midnight in Vienna, 23:00 UTC")
        #expect(
            period.instants.upperBound == Date(timeIntervalSince1970: 1_774_821_600), "midnight after a 23-hour day")
    }

    @Test("an end before the start, a span over the limit and a year out of reach are refused, naming the field")
    func refused() {
        #expect(throws: ValidationFailure(field: "to", code: .outOfRange)) {
            try DayPeriod.read(from: "2026-03-02", to: "2026-03-01", in: vienna, now: now, defaultDays: 28)
        }
        #expect(throws: ValidationFailure(field: "to", code: .outOfRange, limit: DayPeriod.maxDays)) {
            try DayPeriod.read(from: "2020-01-01", to: "2026-03-01", in: vienna, now: now, defaultDays: 28)
        }
        #expect(throws: ValidationFailure(field: "from", code: .outOfRange)) {
            try DayPeriod.read(from: "0001-01-01", to: nil, in: vienna, now: now, defaultDays: 28)
        }
        #expect(throws: ValidationFailure(field: "from", code: .invalidFormat)) {
            try DayPeriod.read(from: "2026-02-30", to: nil, in: vienna, now: now, defaultDays: 28)
        }
    }

    @Test("the spread of values is their count, mean to two decimals, lowest and highest; none for no values")
    func spread() {
        #expect(SessionReportRules.spread([20, 40, 90, 10]) == .init(count: 4, mean: 40, min: 10, max: 90))
        #expect(SessionReportRules.spread([1, 2, 2])?.mean == 1.67)
        #expect(SessionReportRules.spread([]) == nil)
    }
}
