import Foundation
import Testing

@testable import InterludeCore

/// A count of 2^62 in a participant's own windows, or an opening `Int.min` minutes before an appointment, once
/// overflowed the plan checks and stopped the process. Every integer of a plan is now checked against its range before
/// any arithmetic on it.
@Suite("Plans at the integers' extremes")
struct PlanExtremesTests {
    static let extremes = [1 << 62, -(1 << 62), Int.min, Int.max]
    static let morning = TimeWindow(start: LocalTime("08:00")!, end: LocalTime("20:00")!, count: 2)

    static func adjustable(duration: Int = 30) -> SchedulePlan {
        SchedulePlan(
            instrumentKey: "mood-vas", pattern: .randomWindows(days: [.monday: [morning]]), durationMinutes: duration,
            adjustment: AdjustmentBounds(
                earliest: LocalTime("07:00")!, latest: LocalTime("22:00")!, minCount: 1, maxCount: 6))
    }

    @Test("a participant's window count at an extreme is out of range, named by its place", arguments: extremes)
    func adjustmentCount(count: Int) throws {
        let windows = [TimeWindow(start: LocalTime("08:00")!, end: LocalTime("20:00")!, count: count)]
        let refused = #expect(throws: ValidationFailure.self) {
            try Self.adjustable().check(.windows([.monday: windows, .tuesday: windows]))
        }
        #expect(
            refused?.errors.contains(FieldError(field: "days.monday.0.count", code: .outOfRange, limit: 48)) == true)
        #expect(
            refused?.errors.contains(FieldError(field: "days.tuesday.0.count", code: .outOfRange, limit: 48)) == true)
        // The same window with a count the bounds allow is taken.
        try Self.adjustable().check(.windows([.monday: [Self.morning]]))
    }

    @Test("a plan's own window count, duration and appointment minutes at an extreme are refused", arguments: extremes)
    func planFields(value: Int) {
        let windows = SchedulePlan(
            instrumentKey: "mood-vas",
            pattern: .randomWindows(days: [
                .monday: [TimeWindow(start: LocalTime("08:00")!, end: LocalTime("20:00")!, count: value)]
            ]),
            durationMinutes: value)
        let windowFields = Set(windows.problems().map(\.field))
        #expect(windowFields.isSuperset(of: ["durationMinutes", "pattern.days.monday.0.count"]))
        let appointment = SchedulePlan(
            instrumentKey: "isf-k", pattern: .appointment(opensBeforeMinutes: value, closesAfterStartMinutes: value),
            durationMinutes: 60)
        #expect(
            Set(appointment.problems().map(\.field)) == [
                "pattern.opensBeforeMinutes", "pattern.closesAfterStartMinutes",
            ])
        let relative = SchedulePlan(
            instrumentKey: "who-5",
            pattern: .relative(
                anchor: .enrollment, offsets: [value], every: nil, count: nil, time: LocalTime("09:00")!),
            durationMinutes: 60, reminderMinutes: [value], startAfterDays: value)
        #expect(Set(relative.problems().map(\.field)) == ["pattern.offsets.0", "reminderMinutes.0", "startAfterDays"])
    }

    @Test("reminders: at most ten, five minutes apart, inside the prompt's time")
    func reminders() {
        func fields(_ reminders: [Int]) -> Set<String> {
            Set(
                SchedulePlan(
                    instrumentKey: "phq-9", pattern: .weekly(weekday: .monday, time: LocalTime("09:00")!),
                    durationMinutes: 24 * 60,
                    reminderMinutes: reminders
                ).problems().map(\.field))
        }
        #expect(fields([60, 120, 180]) == [])
        #expect(fields(Array(1...300_000)) == ["reminderMinutes"])
        #expect(fields(Array(stride(from: 60, through: 660, by: 60))) == ["reminderMinutes"])
        #expect(fields([60, 62]) == ["reminderMinutes"])
        #expect(fields([2]) == ["reminderMinutes.0"])
        #expect(fields([24 * 60]) == ["reminderMinutes.0"])
    }

    @Test("due reminders are found from the window's bounds, even among 300 000 stored minutes")
    func dueReminders() {
        let opens = Date(timeIntervalSince1970: 1_800_000_000)
        let closes = opens.addingTimeInterval(7 * 86_400)
        let window = opens.addingTimeInterval(3600)...opens.addingTimeInterval(3600 + 15 * 60)
        #expect(
            Array(SchedulePlan.dueReminders([30, 60, 75, 90], opens: opens, closes: closes, in: window)) == [60, 75])
        let stored = Array(1...300_000)
        #expect(
            SchedulePlan.dueReminders(stored, opens: opens, closes: closes, in: window).count
                == SchedulePlan.mostReminders)
        #expect(
            SchedulePlan.dueReminders(stored, opens: opens, closes: opens.addingTimeInterval(60), in: window).isEmpty)
    }
}
