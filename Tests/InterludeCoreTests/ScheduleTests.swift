import Foundation
import PropertyBased
import Testing

@testable import InterludeCore

/// Schedules in the three zones that make daylight saving hard: a one-hour change in spring and autumn on two
/// continents, and Lord Howe's half-hour change.
enum Zones {
    static let names = ["Europe/Vienna", "America/New_York", "Australia/Lord_Howe"]
    static let zones = names.map { TimeZone(identifier: $0)! }

    /// Days around every change of 2026 and 2027 in these zones, plus ordinary days.
    static let days: [LocalDate] = {
        let around = [
            "2026-03-08", "2026-03-29", "2026-04-05", "2026-10-04", "2026-10-25", "2026-11-01",
            "2027-03-14", "2027-03-28", "2027-04-04", "2027-10-03", "2027-10-31", "2027-11-07", "2026-06-15",
            "2026-12-31", "2027-02-28",
        ]
        return around.compactMap(LocalDate.init).flatMap { day in (-1...1).map { day.adding(days: $0) } }
    }()
}

/// Plans with room for their openings on every day, including the one the clocks change: each window is at
/// least an hour longer than its openings need.
enum PlanGen {
    static func randomPlan(seed: UInt64, duration: Int) -> SchedulePlan {
        var generator = SeededGenerator(seed: "plan-\(seed)")
        var days: [Weekday: [TimeWindow]] = [:]
        for weekday in Weekday.allCases where Int.random(in: 0..<5, using: &generator) > 0 {
            var windows: [TimeWindow] = []
            var cursor = Int.random(in: duration..<(6 * 60), using: &generator)
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let count = Int.random(in: 1...3, using: &generator)
                let length = count * duration + 60 + Int.random(in: 0...120, using: &generator)
                guard cursor + length <= 1440 - duration - 1 else { break }
                windows.append(
                    TimeWindow(
                        start: LocalTime(minutes: cursor)!, end: LocalTime(minutes: cursor + length)!, count: count))
                cursor += length + 1 + Int.random(in: 0...90, using: &generator)
            }
            days[weekday] = windows
        }
        if days.isEmpty { days[.monday] = [TimeWindow(start: LocalTime("08:00")!, end: LocalTime("11:59")!, count: 1)] }
        return SchedulePlan(instrumentKey: "mood-vas", pattern: .randomWindows(days: days), durationMinutes: duration)
    }

    static func context(_ zone: TimeZone, seed: UInt64) -> ScheduleContext {
        ScheduleContext(
            participantID: UUID(
                uuidString: String(format: "00000000-0000-4000-8000-%012llx", seed % 0xFFFF_FFFF_FFFF))!,
            planID: UUID(uuidString: "11111111-1111-4111-8111-111111111111")!, timeZone: zone,
            enrolledAt: Date(timeIntervalSince1970: 1_735_689_600),
            planCreatedAt: Date(timeIntervalSince1970: 1_735_689_600))
    }
}

@Suite("Schedules")
struct ScheduleTests {
    @Test("random plans: every opening inside its local window, exact counts, no overlap, the same on every run")
    func randomWindowProperties() async {
        await propertyCheck(
            count: 300, input: Gen.int(in: 0...2), Gen.int(in: 0...(Zones.days.count - 1)), Gen.int(in: 0...1_000_000),
            Gen.int(in: 5...90)
        ) { zoneIndex, dayIndex, seed, duration in
            let zone = Zones.zones[zoneIndex]
            let day = Zones.days[dayIndex]
            let plan = PlanGen.randomPlan(seed: UInt64(seed), duration: duration)
            #expect(plan.problems() == [], "\(plan.problems())")
            let context = PlanGen.context(zone, seed: UInt64(seed))
            let span = plan.occurrences(from: day.adding(days: -1), through: day.adding(days: 1), context: context)
            guard case .randomWindows(let days) = plan.pattern else { return }
            for current in [day.adding(days: -1), day, day.adding(days: 1)] {
                let windows = (days[current.weekday] ?? []).sorted { $0.start < $1.start }
                let onDay = span.filter { $0.key.hasPrefix("\(current)#") }
                #expect(onDay.count == windows.reduce(0) { $0 + $1.count }, "count on \(current) in \(zone.identifier)")
                for occurrence in onDay {
                    let slot = occurrence.key.split(separator: "#")[1].dropFirst().split(separator: ".")
                    let window = windows[Int(slot[0])!]
                    let local = LocalDateTime(occurrence.opensAt, in: zone)
                    #expect(local.date == current, "\(occurrence.key) opens on \(local.date) in \(zone.identifier)")
                    #expect(
                        local.time >= window.start && local.time <= window.end,
                        "\(occurrence.key) opens \(local.time) outside \(window.start)–\(window.end) in \(zone.identifier)"
                    )
                    #expect(occurrence.closesAt.timeIntervalSince(occurrence.opensAt) == TimeInterval(duration * 60))
                }
            }
            let ordered = span.sorted { $0.opensAt < $1.opensAt }
            for (previous, next) in zip(ordered, ordered.dropFirst()) {
                #expect(next.opensAt >= previous.closesAt, "\(previous.key) overlaps \(next.key) in \(zone.identifier)")
            }
            // Planning again, or planning only this day, shows the same day.
            let again = plan.occurrences(from: day.adding(days: -1), through: day.adding(days: 1), context: context)
            #expect(again == span)
            let alone = plan.occurrences(from: day, through: day, context: context)
            #expect(alone == span.filter { $0.key.hasPrefix("\(day)#") })
        }
    }

    @Test("fixed times: at the local time, moved forward only when the clocks skip it, never overlapping")
    func fixedTimeProperties() async {
        await propertyCheck(
            count: 200, input: Gen.int(in: 0...2), Gen.int(in: 0...(Zones.days.count - 1)), Gen.int(in: 1...6),
            Gen.int(in: 5...60)
        ) { zoneIndex, dayIndex, count, duration in
            let zone = Zones.zones[zoneIndex]
            let day = Zones.days[dayIndex]
            let step = max(duration, 1440 / (count + 1))
            let times = (0..<count).map { LocalTime(minutes: 60 + $0 * step)! }.filter { _ in true }
            let plan = SchedulePlan(
                instrumentKey: "mood-vas", pattern: .fixedTimes(times: times, weekdays: Weekday.allCases),
                durationMinutes: duration)
            guard plan.problems().isEmpty else { return }
            let occurrences = plan.occurrences(from: day, through: day, context: PlanGen.context(zone, seed: 1))
            #expect(occurrences.count == times.count)
            for (occurrence, time) in zip(occurrences, times) {
                let local = LocalDateTime(occurrence.opensAt, in: zone)
                let skipped = LocalDateTime(date: day, time: time).occurrences(in: zone).isEmpty
                if skipped {
                    #expect(local.time > time && local.time.minutes - time.minutes <= 60)
                } else {
                    #expect(local.time >= time)
                }
            }
            for (previous, next) in zip(occurrences, occurrences.dropFirst()) {
                #expect(next.opensAt >= previous.closesAt)
            }
        }
    }

    static let daily = SchedulePlan.intersessionDaily()

    @Test("the Intersession-Daily: one opening in each of three windows, thirty minutes each, never overlapping")
    func intersessionDaily() throws {
        #expect(Self.daily.problems() == [])
        let vienna = TimeZone(identifier: "Europe/Vienna")!
        for seed in 0..<200 {
            let context = PlanGen.context(vienna, seed: UInt64(seed))
            let day = LocalDate("2026-03-29")!  // the spring change
            let occurrences = Self.daily.occurrences(from: day, through: day, context: context)
            #expect(occurrences.count == 3)
            let locals = occurrences.map { LocalDateTime($0.opensAt, in: vienna).time }
            #expect(locals[0] >= LocalTime("08:00")! && locals[0] <= LocalTime("11:59")!)
            #expect(locals[1] >= LocalTime("12:00")! && locals[1] <= LocalTime("15:59")!)
            #expect(locals[2] >= LocalTime("16:00")! && locals[2] <= LocalTime("19:59")!)
            #expect(
                occurrences[1].opensAt >= occurrences[0].closesAt && occurrences[2].opensAt >= occurrences[1].closesAt)
        }
        // A start before the previous prompt closed moves later by the difference: 11:50 + 30 min → 12:20 at the earliest.
        let carried = (0..<2000).compactMap { seed -> (LocalTime, LocalTime)? in
            let occurrences = Self.daily.occurrences(
                from: LocalDate("2026-05-04")!, through: LocalDate("2026-05-04")!,
                context: PlanGen.context(vienna, seed: UInt64(seed)))
            let first = LocalDateTime(occurrences[0].opensAt, in: vienna).time
            let second = LocalDateTime(occurrences[1].opensAt, in: vienna).time
            return first.minutes > 11 * 60 + 30 ? (first, second) : nil
        }
        #expect(!carried.isEmpty)
        for (first, second) in carried { #expect(second.minutes >= first.minutes + 30) }
    }

    @Test("other patterns: weekly, monthly, relative to an anchor, around appointments, once")
    func patterns() throws {
        let zone = TimeZone(identifier: "America/New_York")!
        var context = PlanGen.context(zone, seed: 7)
        context.enrolledAt = try Date("2026-03-02T15:00:00Z", strategy: .iso8601)
        context.planCreatedAt = context.enrolledAt
        let from = LocalDate("2026-03-01")!
        let through = LocalDate("2026-04-30")!
        let weekly = SchedulePlan(
            instrumentKey: "tys-weekly", pattern: .weekly(weekday: .sunday, time: LocalTime("18:00")!),
            durationMinutes: 24 * 60)
        let sundays = weekly.occurrences(from: from, through: through, context: context)
        #expect(sundays.count == 8)  // from Sunday 8 March, after enrolment on Monday 2 March
        #expect(sundays.allSatisfy { LocalDateTime($0.opensAt, in: zone).time == LocalTime("18:00")! })
        let monthly = SchedulePlan(
            instrumentKey: "pss-10", pattern: .monthly(day: -1, time: LocalTime("09:00")!), durationMinutes: 3 * 24 * 60
        )
        #expect(
            monthly.occurrences(from: from, through: through, context: context).map(\.key) == [
                "2026-03-31#09:00", "2026-04-30#09:00",
            ])
        let relative = SchedulePlan(
            instrumentKey: "phq-9",
            pattern: .relative(
                anchor: .enrollment, offsets: [0, 14, 28], every: nil, count: nil, time: LocalTime("10:00")!),
            durationMinutes: 3 * 24 * 60)
        #expect(
            relative.occurrences(from: from, through: through, context: context).map(\.key) == [
                "2026-03-02#10:00", "2026-03-16#10:00", "2026-03-30#10:00",
            ])
        let repeated = SchedulePlan(
            instrumentKey: "phq-9",
            pattern: .relative(anchor: .enrollment, offsets: [7], every: 7, count: 3, time: LocalTime("10:00")!),
            durationMinutes: 60, startAfterDays: 0)
        #expect(
            repeated.occurrences(from: from, through: through, context: context).map(\.key) == [
                "2026-03-09#10:00", "2026-03-16#10:00", "2026-03-23#10:00",
            ])
        let afterTherapy = SchedulePlan(
            instrumentKey: "phq-9",
            pattern: .relative(
                anchor: .therapyEnd, offsets: [0, 28], every: nil, count: nil, time: LocalTime("10:00")!),
            durationMinutes: 60)
        #expect(
            afterTherapy.occurrences(from: from, through: through, context: context).isEmpty,
            "no end set, no post measurement")
        var ending = context
        ending.therapyStart = LocalDate("2026-01-10")
        ending.therapyEnd = LocalDate("2026-03-20")
        #expect(
            afterTherapy.occurrences(from: from, through: through, context: ending).map(\.key) == [
                "2026-03-20#10:00", "2026-04-17#10:00",
            ])
        let later = SchedulePlan(
            instrumentKey: "phq-9", pattern: .weekly(weekday: .sunday, time: LocalTime("18:00")!), durationMinutes: 60,
            startAfterDays: 14)
        #expect(later.occurrences(from: from, through: through, context: context).first?.key == "2026-03-22#18:00")
        let bounded = SchedulePlan(
            instrumentKey: "phq-9", pattern: .weekly(weekday: .sunday, time: LocalTime("18:00")!), durationMinutes: 60,
            firstDate: LocalDate("2026-03-20"), lastDate: LocalDate("2026-04-05"))
        #expect(
            bounded.occurrences(from: from, through: through, context: context).map(\.key) == [
                "2026-03-22#18:00", "2026-03-29#18:00", "2026-04-05#18:00",
            ])

        let appointment = AppointmentSlot(
            id: UUID(uuidString: "22222222-2222-4222-8222-222222222222")!,
            startsAt: try Date("2026-03-10T14:00:00Z", strategy: .iso8601),
            endsAt: try Date("2026-03-10T15:00:00Z", strategy: .iso8601))
        context.appointments = [appointment]
        let isfk = SchedulePlan(
            instrumentKey: "isf-k", pattern: .appointment(opensBeforeMinutes: 24 * 60, closesAfterStartMinutes: 0),
            durationMinutes: 60)
        let around = isfk.occurrences(from: from, through: through, context: context)
        #expect(around.count == 1)
        #expect(around[0].opensAt == appointment.startsAt.addingTimeInterval(-24 * 3600))
        #expect(around[0].closesAt == appointment.startsAt)
        #expect(around[0].key == "appointment:22222222-2222-4222-8222-222222222222")

        let once = SchedulePlan(
            instrumentKey: "who-5", pattern: .once, durationMinutes: 7 * 24 * 60, reminderMinutes: [60, 24 * 60])
        let first = once.occurrences(from: from, through: through, context: context)
        #expect(first.map(\.key) == ["once"])
        #expect(first[0].opensAt == context.enrolledAt)
        #expect(first[0].reminders.count == 2)
        #expect(
            SchedulePlan(instrumentKey: "who-5", pattern: .onDemand, durationMinutes: 60)
                .occurrences(from: from, through: through, context: context).isEmpty)
    }

    @Test("plans that cannot work are refused, naming the place")
    func refusedPlans() throws {
        func codes(_ plan: SchedulePlan) -> [String: String] {
            Dictionary(plan.problems().map { ($0.field, $0.code.rawValue) }, uniquingKeysWith: { first, _ in first })
        }
        let tight = SchedulePlan(
            instrumentKey: "mood-vas",
            pattern: .randomWindows(days: [
                .monday: [TimeWindow(start: LocalTime("08:00")!, end: LocalTime("08:40")!, count: 2)]
            ]),
            durationMinutes: 30)
        #expect(codes(tight)["pattern.days.monday.0.count"] == "outOfRange")
        let overlapping = SchedulePlan(
            instrumentKey: "mood-vas",
            pattern: .randomWindows(days: [
                .monday: [
                    TimeWindow(start: LocalTime("08:00")!, end: LocalTime("10:00")!, count: 1),
                    TimeWindow(start: LocalTime("09:00")!, end: LocalTime("12:00")!, count: 1),
                ]
            ]),
            durationMinutes: 30)
        #expect(codes(overlapping)["pattern.days.monday.1"] == "overlap")
        let closeTimes = SchedulePlan(
            instrumentKey: "mood-vas",
            pattern: .fixedTimes(times: [LocalTime("09:00")!, LocalTime("09:20")!], weekdays: [.monday]),
            durationMinutes: 30)
        #expect(codes(closeTimes)["pattern.times"] == "overlap")
        let badReminder = SchedulePlan(
            instrumentKey: "mood-vas", pattern: .once, durationMinutes: 60, reminderMinutes: [90])
        #expect(codes(badReminder)["reminderMinutes.0"] == "outOfRange")
        let badMonth = SchedulePlan(
            instrumentKey: "mood-vas", pattern: .monthly(day: 31, time: LocalTime("09:00")!), durationMinutes: 60)
        #expect(codes(badMonth)["pattern.day"] == "outOfRange")
        let adjustableOnce = SchedulePlan(
            instrumentKey: "mood-vas", pattern: .once, durationMinutes: 60,
            adjustment: AdjustmentBounds(
                earliest: LocalTime("08:00")!, latest: LocalTime("20:00")!, minCount: 1, maxCount: 3))
        #expect(codes(adjustableOnce)["adjustment"] == "notAllowed")
    }

    @Test("participant adjustments are accepted inside the bounds and refused outside them")
    func adjustments() throws {
        var plan = Self.daily
        plan.adjustment = AdjustmentBounds(
            earliest: LocalTime("07:00")!, latest: LocalTime("21:00")!, minCount: 1, maxCount: 4)
        let inside = PlanAdjustment.windows([
            .monday: [TimeWindow(start: LocalTime("07:00")!, end: LocalTime("12:00")!, count: 2)],
            .saturday: [TimeWindow(start: LocalTime("10:00")!, end: LocalTime("20:00")!, count: 4)],
        ])
        try plan.check(inside)
        let early = PlanAdjustment.windows([
            .monday: [TimeWindow(start: LocalTime("06:00")!, end: LocalTime("12:00")!, count: 1)]
        ])
        #expect(throws: ValidationFailure.self) { try plan.check(early) }
        let many = PlanAdjustment.windows([
            .monday: [TimeWindow(start: LocalTime("08:00")!, end: LocalTime("20:00")!, count: 5)]
        ])
        #expect(throws: ValidationFailure.self) { try plan.check(many) }
        #expect(throws: ValidationFailure.self) {
            try plan.check(.times(times: [LocalTime("09:00")!], weekdays: [.monday]))
        }
        var fixed = Self.daily
        fixed.adjustment = nil
        #expect(throws: ValidationFailure(field: "planId", code: .notAllowed)) { try fixed.check(inside) }

        // The adjusted windows are used, and only on the days the participant kept.
        let context = ScheduleContext(
            participantID: UUID(), planID: UUID(), timeZone: TimeZone(identifier: "Europe/Vienna")!,
            enrolledAt: Date(timeIntervalSince1970: 1_735_689_600),
            planCreatedAt: Date(timeIntervalSince1970: 1_735_689_600),
            adjustment: inside)
        let week = plan.occurrences(from: LocalDate("2026-05-04")!, through: LocalDate("2026-05-10")!, context: context)
        #expect(week.count == 6)
    }

    @Test("where the plan offers both, a participant switches between random windows and fixed times; elsewhere not")
    func eitherMode() throws {
        var plan = Self.daily
        plan.adjustment = AdjustmentBounds(
            earliest: LocalTime("07:00")!, latest: LocalTime("21:00")!, minCount: 1, maxCount: 3)
        let fixed = PlanAdjustment.times(
            times: [LocalTime("08:00")!, LocalTime("19:30")!], weekdays: [.monday, .friday])
        #expect(throws: ValidationFailure(field: "adjustment", code: .wrongType)) { try plan.check(fixed) }
        plan.adjustment?.eitherMode = true
        try plan.check(fixed)
        #expect(throws: ValidationFailure.self) {
            try plan.check(.times(times: [LocalTime("06:30")!], weekdays: [.monday]))
        }

        let context = ScheduleContext(
            participantID: UUID(), planID: UUID(), timeZone: TimeZone(identifier: "Europe/Vienna")!,
            enrolledAt: Date(timeIntervalSince1970: 1_735_689_600),
            planCreatedAt: Date(timeIntervalSince1970: 1_735_689_600),
            adjustment: fixed)
        let week = plan.occurrences(from: LocalDate("2026-05-04")!, through: LocalDate("2026-05-10")!, context: context)
        #expect(
            week.map { LocalDateTime($0.opensAt, in: context.timeZone).description } == [
                "2026-05-04T08:00", "2026-05-04T19:30", "2026-05-08T08:00", "2026-05-08T19:30",
            ])
        plan.adjustment?.eitherMode = false
        #expect(plan.adjustedPattern(fixed) == plan.pattern, "a choice the plan no longer offers is not followed")

        let monthly = SchedulePlan(
            instrumentKey: "pss-10", pattern: .monthly(day: 1, time: LocalTime("09:00")!), durationMinutes: 60,
            adjustment: AdjustmentBounds(
                earliest: LocalTime("07:00")!, latest: LocalTime("21:00")!, minCount: 1, maxCount: 1, eitherMode: true))
        #expect(monthly.problems().map(\.field) == ["adjustment.eitherMode"])
    }

    @Test("a weekly or monthly plan's time is the participant's, inside the bounds; its day stays the plan's")
    func ownTimeOfWeeklyPlan() throws {
        let bounds = AdjustmentBounds(
            earliest: LocalTime("08:00")!, latest: LocalTime("20:00")!, minCount: 1, maxCount: 1)
        let weekly = SchedulePlan(
            instrumentKey: "tys-weekly", pattern: .weekly(weekday: .sunday, time: LocalTime("18:00")!),
            durationMinutes: 24 * 60,
            adjustment: bounds)
        #expect(weekly.problems() == [])
        try weekly.check(.time(LocalTime("09:15")!))
        #expect(throws: ValidationFailure(field: "time", code: .outOfRange)) {
            try weekly.check(.time(LocalTime("21:00")!))
        }
        #expect(throws: ValidationFailure(field: "adjustment", code: .wrongType)) {
            try weekly.check(.times(times: [LocalTime("09:00")!], weekdays: [.monday]))
        }
        let context = ScheduleContext(
            participantID: UUID(), planID: UUID(), timeZone: TimeZone(identifier: "Europe/Vienna")!,
            enrolledAt: Date(timeIntervalSince1970: 1_735_689_600),
            planCreatedAt: Date(timeIntervalSince1970: 1_735_689_600),
            adjustment: .time(LocalTime("09:15")!))
        let sundays = weekly.occurrences(
            from: LocalDate("2026-05-04")!, through: LocalDate("2026-05-17")!, context: context)
        #expect(
            sundays.map { LocalDateTime($0.opensAt, in: context.timeZone).description } == [
                "2026-05-10T09:15", "2026-05-17T09:15",
            ])
        let encoded = try JSONEncoder().encode(PlanAdjustment.time(LocalTime("09:15")!))
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"time":"09:15"}"#)
        #expect(try JSONDecoder().decode(PlanAdjustment.self, from: encoded) == .time(LocalTime("09:15")!))
    }

    @Test("plans round-trip through JSON")
    func coding() throws {
        var plan = Self.daily
        plan.notification = LocalizedText(en: "Time for a short check", de: "Zeit für eine kurze Abfrage")
        plan.firstDate = LocalDate("2026-03-01")
        plan.reminderMinutes = [10]
        let data = try JSONEncoder().encode(plan)
        #expect(try JSONDecoder().decode(SchedulePlan.self, from: data) == plan)
        let appointment = SchedulePlan(
            instrumentKey: "isf-k", pattern: .appointment(opensBeforeMinutes: 1440, closesAfterStartMinutes: 0),
            durationMinutes: 60)
        #expect(try JSONDecoder().decode(SchedulePlan.self, from: JSONEncoder().encode(appointment)) == appointment)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                SchedulePlan.self,
                from: Data(#"{"instrumentKey": "x", "durationMinutes": 5, "pattern": {"kind": "hourly"}}"#.utf8))
        }
    }
}
