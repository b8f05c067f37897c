import Foundation
import InterludeCore

/// A plan as a web form sends it: every field a string, lists written out (`08:30, 20:00`), random windows as rows of
/// from, until and how many, spans of time with the unit chosen for them. Turns into a checked `SchedulePlan`, with every problem
/// named by the form field it belongs to.
struct PlanForm: Codable, Sendable, Equatable {
    var instrumentKey: String = ""
    var kind: String = "fixedTimes"
    var times: String = ""
    var weekdays: [String] = Weekday.allCases.map(\.rawValue)
    /// Each weekday's random windows (by the weekday's name), each row by its position on the form ("0", "1", …).
    var windows: [String: [String: WindowRow]] = [:]
    var weekday: String = Weekday.sunday.rawValue
    var time: String = ""
    var day: String = ""
    var anchor: String = SchedulePattern.Anchor.enrollment.rawValue
    var offsets: String = ""
    var every: String = ""
    var count: String = ""
    /// Spans of time in the unit the form chose for each (`TimeUnit`): "2" and "days".
    var opensBefore: String = ""
    var opensBeforeUnit: String = TimeUnit.days.rawValue
    var closesAfterStart: String = ""
    var closesAfterStartUnit: String = TimeUnit.hours.rawValue
    var duration: String = ""
    var durationUnit: String = TimeUnit.hours.rawValue
    /// After how long unanswered each reminder goes out: "12, 24" and "hours".
    var reminders: String = ""
    var remindersUnit: String = TimeUnit.hours.rawValue
    var notificationEn: String = ""
    var notificationDe: String = ""
    var startAfterDays: String = ""
    var firstDate: String = ""
    var lastDate: String = ""
    var adjustEarliest: String = ""
    var adjustLatest: String = ""
    var adjustMinCount: String = ""
    var adjustMaxCount: String = ""
    /// Set (any value) when participants may choose random windows or fixed times.
    var adjustEitherMode: String = ""

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) throws -> String { try container.decodeIfPresent(String.self, forKey: key) ?? "" }
        instrumentKey = try text(.instrumentKey)
        kind = try text(.kind)
        times = try text(.times)
        weekdays = try container.decodeIfPresent([String].self, forKey: .weekdays) ?? []
        windows = try container.decodeIfPresent([String: [String: WindowRow]].self, forKey: .windows) ?? [:]
        weekday = try text(.weekday)
        time = try text(.time)
        day = try text(.day)
        anchor = try text(.anchor)
        offsets = try text(.offsets)
        every = try text(.every)
        count = try text(.count)
        // A unit left out is the one the form offers first.
        func unit(_ key: CodingKeys, _ first: TimeUnit) throws -> String {
            try container.decodeIfPresent(String.self, forKey: key) ?? first.rawValue
        }
        opensBefore = try text(.opensBefore)
        opensBeforeUnit = try unit(.opensBeforeUnit, .days)
        closesAfterStart = try text(.closesAfterStart)
        closesAfterStartUnit = try unit(.closesAfterStartUnit, .hours)
        duration = try text(.duration)
        durationUnit = try unit(.durationUnit, .hours)
        reminders = try text(.reminders)
        remindersUnit = try unit(.remindersUnit, .hours)
        notificationEn = try text(.notificationEn)
        notificationDe = try text(.notificationDe)
        startAfterDays = try text(.startAfterDays)
        firstDate = try text(.firstDate)
        lastDate = try text(.lastDate)
        adjustEarliest = try text(.adjustEarliest)
        adjustLatest = try text(.adjustLatest)
        adjustMinCount = try text(.adjustMinCount)
        adjustMaxCount = try text(.adjustMaxCount)
        adjustEitherMode = try text(.adjustEitherMode)
    }

    /// The form field of each weekday's windows.
    static func windowsField(_ weekday: Weekday) -> String {
        "windows" + weekday.rawValue.prefix(1).uppercased() + weekday.rawValue.dropFirst()
    }

    /// The weekday's rows in the form's order, empty ones included.
    func windows(on weekday: Weekday) -> [WindowRow] {
        (windows[weekday.rawValue] ?? [:]).sorted { (Int($0.key) ?? 0) < (Int($1.key) ?? 0) }.map(\.value)
    }

    /// One random window as the form's row sends it: from, until, and how many prompts open inside it.
    struct WindowRow: Codable, Sendable, Equatable {
        var from: String
        var until: String
        var count: String

        init(from: String = "", until: String = "", count: String = "") {
            self.from = from
            self.until = until
            self.count = count
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            from = try container.decodeIfPresent(String.self, forKey: .from) ?? ""
            until = try container.decodeIfPresent(String.self, forKey: .until) ?? ""
            count = try container.decodeIfPresent(String.self, forKey: .count) ?? ""
        }

        var isEmpty: Bool { [from, until, count].allSatisfy { PlanForm.clean($0).isEmpty } }
    }

    /// The plan the form describes, or every problem at once.
    func plan() throws(ValidationFailure) -> SchedulePlan {
        var validator = FieldValidator()
        let pattern = self.pattern(into: &validator)
        let duration = Self.minutes(
            self.duration, unit: durationUnit, field: "duration", required: true, into: &validator)
        var reminders: [Int] = []
        let counts = Self.integers(self.reminders, field: "reminders", into: &validator)
        if !counts.isEmpty, let unit = Self.unit(remindersUnit, field: "reminders", into: &validator) {
            reminders = counts.compactMap { Self.minutes($0, in: unit, field: "reminders", into: &validator) }
        }
        let startAfter = Self.integer(startAfterDays, field: "startAfterDays", required: false, into: &validator)
        let first = Self.date(firstDate, field: "firstDate", into: &validator)
        let last = Self.date(lastDate, field: "lastDate", into: &validator)
        var notification: LocalizedText?
        var texts: [Language: String] = [:]
        for (language, text) in [(Language.en, notificationEn), (.de, notificationDe)] {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { texts[language] = trimmed }
        }
        if !texts.isEmpty { notification = LocalizedText(texts) }
        let bounds = self.bounds(into: &validator)
        try validator.check()
        let plan = SchedulePlan(
            instrumentKey: instrumentKey, pattern: pattern!, durationMinutes: duration!, reminderMinutes: reminders,
            notification: notification, startAfterDays: startAfter ?? 0, firstDate: first, lastDate: last,
            adjustment: bounds)
        let problems = plan.problems()
        guard problems.isEmpty else {
            throw ValidationFailure(
                problems.map { FieldError(field: Self.formField(for: $0.field), code: $0.code, limit: $0.limit) })
        }
        return plan
    }

    private func pattern(into validator: inout FieldValidator) -> SchedulePattern? {
        switch kind {
        case "fixedTimes":
            let parsed = Self.times(times, field: "times", into: &validator)
            let days = weekdays.compactMap(Weekday.init(rawValue:))
            if days.isEmpty { validator.add("weekdays", .required) }
            return .fixedTimes(times: parsed, weekdays: Weekday.allCases.filter(days.contains))
        case "randomWindows":
            var days: [Weekday: [TimeWindow]] = [:]
            for weekday in Weekday.allCases {
                let windows = Self.windows(
                    self.windows(on: weekday), field: Self.windowsField(weekday), into: &validator)
                if !windows.isEmpty { days[weekday] = windows }
            }
            if days.isEmpty { validator.add(Self.windowsField(.monday), .required) }
            return .randomWindows(days: days)
        case "weekly":
            let parsedDay = Weekday(rawValue: weekday)
            if parsedDay == nil { validator.add("weekday", .required) }
            let parsedTime = Self.time(time, field: "time", into: &validator)
            guard let parsedDay, let parsedTime else { return nil }
            return .weekly(weekday: parsedDay, time: parsedTime)
        case "monthly":
            let parsedDay = Self.integer(day, field: "day", required: true, into: &validator)
            let parsedTime = Self.time(time, field: "time", into: &validator)
            guard let parsedDay, let parsedTime else { return nil }
            return .monthly(day: parsedDay, time: parsedTime)
        case "relative":
            let parsedAnchor = SchedulePattern.Anchor(rawValue: anchor)
            if parsedAnchor == nil { validator.add("anchor", .required) }
            let parsedOffsets = Self.integers(offsets, field: "offsets", into: &validator)
            let parsedEvery = Self.integer(every, field: "every", required: false, into: &validator)
            let parsedCount = Self.integer(count, field: "count", required: false, into: &validator)
            let parsedTime = Self.time(time, field: "time", into: &validator)
            guard let parsedAnchor, let parsedTime else { return nil }
            return .relative(
                anchor: parsedAnchor, offsets: parsedOffsets, every: parsedEvery, count: parsedCount, time: parsedTime)
        case "appointment":
            let before = Self.minutes(
                opensBefore, unit: opensBeforeUnit, field: "opensBefore", required: true, into: &validator)
            let after = Self.minutes(
                closesAfterStart, unit: closesAfterStartUnit, field: "closesAfterStart", required: false,
                into: &validator)
            guard let before else { return nil }
            return .appointment(opensBeforeMinutes: before, closesAfterStartMinutes: after ?? 0)
        case "once":
            return .once
        case "onDemand":
            return .onDemand
        default:
            validator.add("kind", kind.isEmpty ? .required : .invalidValue)
            return nil
        }
    }

    private func bounds(into validator: inout FieldValidator) -> AdjustmentBounds? {
        let fields = [adjustEarliest, adjustLatest, adjustMinCount, adjustMaxCount]
        guard fields.contains(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else { return nil }
        let earliest = Self.time(adjustEarliest, field: "adjustEarliest", into: &validator)
        let latest = Self.time(adjustLatest, field: "adjustLatest", into: &validator)
        // A weekly or monthly plan has one opening; only its time is the participant's.
        let counted = kind != "weekly" && kind != "monthly"
        let least =
            counted ? Self.integer(adjustMinCount, field: "adjustMinCount", required: true, into: &validator) : 1
        let most = counted ? Self.integer(adjustMaxCount, field: "adjustMaxCount", required: true, into: &validator) : 1
        guard let earliest, let latest, let least, let most else { return nil }
        return AdjustmentBounds(
            earliest: earliest, latest: latest, minCount: least, maxCount: most,
            eitherMode: counted && !adjustEitherMode.isEmpty)
    }

    /// The form field a problem of the checked plan belongs to.
    static func formField(for planField: String) -> String {
        let parts = planField.split(separator: ".").map(String.init)
        switch (parts.first, parts.count > 1 ? parts[1] : nil) {
        case ("pattern", "days"):
            return parts.count > 2 ? Weekday(rawValue: parts[2]).map(windowsField) ?? "windowsMonday" : "windowsMonday"
        case ("pattern", "opensBeforeMinutes"):
            return "opensBefore"
        case ("pattern", "closesAfterStartMinutes"):
            return "closesAfterStart"
        case ("pattern", let field?):
            return field
        case ("reminderMinutes", _):
            return "reminders"
        case ("durationMinutes", _):
            return "duration"
        case ("adjustment", let field?):
            return "adjust" + field.prefix(1).uppercased() + field.dropFirst()
        case ("adjustment", nil):
            return "adjustEarliest"
        default:
            return parts.first ?? planField
        }
    }

    // MARK: Reading the fields

    private static func clean(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    private static func items(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == ";" || $0.isNewline }).map { clean(String($0)) }
            .filter { !$0.isEmpty }
    }

    static func integer(_ text: String, field: String, required: Bool, into validator: inout FieldValidator) -> Int? {
        let value = clean(text)
        if value.isEmpty {
            if required { validator.add(field, .required) }
            return nil
        }
        guard let number = Int(value) else {
            validator.add(field, .invalidFormat)
            return nil
        }
        return number
    }

    /// A span written as a number of `unit`s, in minutes.
    static func minutes(
        _ text: String, unit: String, field: String, required: Bool, into validator: inout FieldValidator
    ) -> Int? {
        guard let count = integer(text, field: field, required: required, into: &validator),
            let unit = self.unit(unit, field: field, into: &validator)
        else { return nil }
        return minutes(count, in: unit, field: field, into: &validator)
    }

    private static func minutes(_ count: Int, in unit: TimeUnit, field: String, into validator: inout FieldValidator)
        -> Int?
    {
        let (minutes, overflow) = count.multipliedReportingOverflow(by: unit.minutes)
        guard !overflow else {
            validator.add(field, .outOfRange)
            return nil
        }
        return minutes
    }

    private static func unit(_ text: String, field: String, into validator: inout FieldValidator) -> TimeUnit? {
        guard let unit = TimeUnit(rawValue: clean(text)) else {
            validator.add(field, .invalidValue)
            return nil
        }
        return unit
    }

    static func integers(_ text: String, field: String, into validator: inout FieldValidator) -> [Int] {
        var numbers: [Int] = []
        for item in items(text) {
            guard let number = Int(item) else {
                validator.add(field, .invalidFormat)
                return []
            }
            numbers.append(number)
        }
        return numbers
    }

    static func time(_ text: String, field: String, into validator: inout FieldValidator) -> LocalTime? {
        let value = clean(text)
        if value.isEmpty {
            validator.add(field, .required)
            return nil
        }
        guard let time = LocalTime(value) else {
            validator.add(field, .invalidFormat)
            return nil
        }
        return time
    }

    static func times(_ text: String, field: String, into validator: inout FieldValidator) -> [LocalTime] {
        let parsed = items(text).map(LocalTime.init)
        if parsed.contains(where: { $0 == nil }) { validator.add(field, .invalidFormat) }
        if parsed.isEmpty { validator.add(field, .required) }
        return parsed.compactMap { $0 }
    }

    static func date(_ text: String, field: String, into validator: inout FieldValidator) -> LocalDate? {
        let value = clean(text)
        guard !value.isEmpty else { return nil }
        guard let date = LocalDate(value) else {
            validator.add(field, .invalidFormat)
            return nil
        }
        return date
    }

    /// The rows of one weekday that are filled in: from and until required, how many one when left out.
    static func windows(_ rows: [WindowRow], field: String, into validator: inout FieldValidator) -> [TimeWindow] {
        var windows: [TimeWindow] = []
        for row in rows where !row.isEmpty {
            let count = clean(row.count).isEmpty ? 1 : Int(clean(row.count))
            guard let start = LocalTime(clean(row.from)), let end = LocalTime(clean(row.until)), let count else {
                validator.add(field, .invalidFormat)
                return []
            }
            windows.append(TimeWindow(start: start, end: end, count: count))
        }
        return windows
    }
}

/// The unit a span of time is written in on a form: people think of a questionnaire open for 2 days, not 2880 minutes.
enum TimeUnit: String, Codable, Sendable, CaseIterable {
    case minutes, hours, days, weeks

    var minutes: Int {
        switch self {
        case .minutes: 1
        case .hours: 60
        case .days: 24 * 60
        case .weeks: 7 * 24 * 60
        }
    }
}
