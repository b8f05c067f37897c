import Foundation
import InterludeCore
import Testing

@testable import InterludeServer

@Suite("Plans from the console form")
struct PlanFormTests {
    func fields(_ failure: ValidationFailure) -> Set<String> { Set(failure.errors.map(\.field)) }

    func refused(_ form: PlanForm) -> Set<String> {
        do {
            _ = try form.plan()
            return []
        } catch {
            return fields(error)
        }
    }

    @Test("the Intersession-Daily written as windows per weekday")
    func windows() throws {
        var form = PlanForm()
        form.instrumentKey = "intersession-daily"
        form.kind = "randomWindows"
        for weekday in Weekday.allCases {
            form.windows[weekday.rawValue] = [
                "0": .init(from: "08:00", until: "11:59", count: "1"),
                "1": .init(from: " 12:00", until: "15:59 ", count: "1"),
                "2": .init(from: "16:00", until: "19:59"), "3": .init(),
            ]
        }
        form.duration = "30"
        form.durationUnit = "minutes"
        form.reminders = "10, 20"
        form.remindersUnit = "minutes"
        form.notificationEn = "  How are you?  "
        let plan = try form.plan()
        let windows = [("08:00", "11:59"), ("12:00", "15:59"), ("16:00", "19:59")].map {
            TimeWindow(start: LocalTime($0.0)!, end: LocalTime($0.1)!, count: 1)
        }
        #expect(
            plan.pattern
                == .randomWindows(days: Dictionary(uniqueKeysWithValues: Weekday.allCases.map { ($0, windows) })))
        #expect(plan.durationMinutes == 30 && plan.reminderMinutes == [10, 20])
        #expect(plan.notification?.text(.en) == "How are you?")
        #expect(form.windows(on: .monday).map(\.from) == ["08:00", " 12:00", "16:00", ""], "rows in the form's order")
    }

    @Test("every kind reads its own fields")
    func kinds() throws {
        var form = PlanForm()
        form.instrumentKey = "who-5"
        form.duration = "1"
        form.kind = "fixedTimes"
        form.times = "20:00, 08:30"
        form.weekdays = ["monday", "friday"]
        form.adjustEarliest = "07:00"
        form.adjustLatest = "22:00"
        form.adjustMinCount = "1"
        form.adjustMaxCount = "3"
        let fixed = try form.plan()
        #expect(
            fixed.pattern
                == .fixedTimes(times: [LocalTime("20:00")!, LocalTime("08:30")!], weekdays: [.monday, .friday]))
        #expect(
            fixed.adjustment
                == AdjustmentBounds(
                    earliest: LocalTime("07:00")!, latest: LocalTime("22:00")!, minCount: 1, maxCount: 3))
        form.adjustEitherMode = "1"
        #expect(try form.plan().adjustment?.eitherMode == true)
        form.adjustEitherMode = ""
        form.kind = "weekly"
        form.weekday = "sunday"
        form.time = "18:00"
        form.adjustMinCount = ""
        form.adjustMaxCount = ""
        #expect(
            try form.plan().adjustment
                == AdjustmentBounds(
                    earliest: LocalTime("07:00")!, latest: LocalTime("22:00")!, minCount: 1, maxCount: 1),
            "a weekly plan's bounds need no counts")
        form.kind = "fixedTimes"
        #expect(throws: ValidationFailure.self) { try form.plan() }
        form.adjustEarliest = ""
        form.adjustLatest = ""
        form.adjustMinCount = ""
        form.adjustMaxCount = ""
        form.kind = "weekly"
        form.weekday = "sunday"
        form.time = "18:00"
        #expect(try form.plan().pattern == .weekly(weekday: .sunday, time: LocalTime("18:00")!))
        form.kind = "monthly"
        form.day = "-1"
        #expect(try form.plan().pattern == .monthly(day: -1, time: LocalTime("18:00")!))
        form.kind = "relative"
        form.anchor = "therapyStart"
        form.offsets = "0, 7, 28"
        #expect(
            try form.plan().pattern
                == .relative(
                    anchor: .therapyStart, offsets: [0, 7, 28], every: nil, count: nil, time: LocalTime("18:00")!))
        form.kind = "appointment"
        form.opensBefore = "1"
        form.opensBeforeUnit = "days"
        form.duration = "1"
        form.durationUnit = "days"
        #expect(try form.plan().pattern == .appointment(opensBeforeMinutes: 1440, closesAfterStartMinutes: 0))
        form.closesAfterStart = "30"
        form.closesAfterStartUnit = "minutes"
        #expect(try form.plan().pattern == .appointment(opensBeforeMinutes: 1440, closesAfterStartMinutes: 30))
        form.kind = "once"
        #expect(try form.plan().pattern == .once)
    }

    @Test(
        "spans of time are written in the unit the form chose; a unit it does not know, or a span too long to count, is refused by name"
    )
    func units() {
        var form = PlanForm()
        form.instrumentKey = "who-5"
        form.kind = "once"
        form.duration = "2"
        form.durationUnit = "weeks"
        form.reminders = "1, 3"
        form.remindersUnit = "days"
        #expect((try? form.plan())?.durationMinutes == 2 * 7 * 24 * 60)
        #expect((try? form.plan())?.reminderMinutes == [24 * 60, 3 * 24 * 60])
        form.durationUnit = "fortnights"
        #expect(refused(form) == ["duration"])
        form.durationUnit = "weeks"
        form.reminders = String(Int.max)
        #expect(refused(form) == ["reminders"])
        form.reminders = "1"
        form.remindersUnit = ""
        #expect(refused(form) == ["reminders"])
    }

    @Test("problems are named by the form field they belong to")
    func problems() {
        var form = PlanForm()
        form.instrumentKey = "who-5"
        form.kind = "randomWindows"
        #expect(refused(form) == ["windowsMonday", "duration"])
        form.duration = "thirty"
        form.windows["tuesday"] = ["0": .init(from: "08:00", until: "ten o'clock")]
        #expect(refused(form) == ["windowsTuesday", "windowsMonday", "duration"])
        form.duration = "2"
        form.windows["tuesday"] = ["0": .init(from: "08:00", until: "08:30", count: "2")]
        form.reminders = "200"
        form.remindersUnit = "minutes"
        #expect(refused(form) == ["windowsTuesday", "reminders"])
        form.windows["tuesday"] = ["0": .init(from: "08:00", until: "12:00", count: "1")]
        form.reminders = ""
        form.adjustEarliest = "20:00"
        form.adjustLatest = "08:00"
        form.adjustMinCount = "1"
        form.adjustMaxCount = "2"
        #expect(refused(form) == ["adjustLatest"])
        form.adjustEarliest = ""
        form.adjustLatest = ""
        #expect(refused(form) == ["adjustEarliest", "adjustLatest"])
        form.kind = "sometimes"
        #expect(refused(form).contains("kind"))
        form = PlanForm()
        form.instrumentKey = "who-5"
        form.duration = "10"
        form.weekdays = []
        #expect(refused(form) == ["times", "weekdays"])
    }
}
