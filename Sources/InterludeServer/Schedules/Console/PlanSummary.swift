import Fluent
import Foundation
import InterludeCore
import Vapor

/// A plan in one line, in the reader's language.
struct PlanSummary {
    static let kinds = [
        "fixedTimes", "randomWindows", "weekly", "monthly", "relative", "appointment", "once", "onDemand",
    ]

    let localizer: Localizer
    let language: Language

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        localizer.text(key, language, arguments)
    }

    private func day(_ weekday: Weekday) -> String { text("weekday.\(weekday.rawValue)") }

    private func duration(_ minutes: Int) -> String { localizer.duration(minutes: minutes, language) }

    /// "the 1st", "the 22nd" in English, "1." in German.
    func dayOfMonth(_ day: Int) -> String {
        let specific = "planSummary.dayOfMonth.\(day)"
        return localizer.has(specific) ? text(specific) : text("planSummary.dayOfMonth", ["day": String(day)])
    }

    /// "08:00 to 11:59: 2 prompts, 12:00 to 15:59: 1 prompt".
    private func windows(_ windows: [TimeWindow]) -> String {
        windows.map { window in
            text(
                "planSummary.window",
                [
                    "from": window.start.description, "until": window.end.description,
                    "count": localizer.text("planSummary.prompts", count: window.count, language),
                ])
        }.joined(separator: ", ")
    }

    func describe(_ plan: SchedulePlan) -> String {
        var parts = [pattern(plan.pattern), text("planSummary.open", ["duration": duration(plan.durationMinutes)])]
        if !plan.reminderMinutes.isEmpty {
            parts.append(
                text("planSummary.reminders", ["durations": plan.reminderMinutes.map(duration).joined(separator: ", ")])
            )
        }
        if plan.startAfterDays > 0 {
            parts.append(text("planSummary.startAfter", ["days": String(plan.startAfterDays)]))
        }
        if let first = plan.firstDate { parts.append(text("planSummary.from", ["date": first.description])) }
        if let last = plan.lastDate { parts.append(text("planSummary.until", ["date": last.description])) }
        if let bounds = plan.adjustment {
            parts.append(
                text(
                    "planSummary.adjustable",
                    [
                        "earliest": bounds.earliest.description, "latest": bounds.latest.description,
                        "min": String(bounds.minCount), "max": String(bounds.maxCount),
                    ]))
        }
        return parts.joined(separator: " · ")
    }

    private func pattern(_ pattern: SchedulePattern) -> String {
        switch pattern {
        case .fixedTimes(let times, let weekdays):
            let days =
                Set(weekdays) == Set(Weekday.allCases)
                ? text("planSummary.everyDay") : weekdays.map(day).joined(separator: ", ")
            return text(
                "planSummary.fixedTimes", ["times": times.map(\.description).joined(separator: ", "), "days": days])
        case .randomWindows(let days):
            let grouped = Dictionary(grouping: Weekday.allCases.filter { days[$0]?.isEmpty == false }) {
                windows(days[$0]!)
            }
            let described = grouped.sorted { $0.value[0] < $1.value[0] }.map { windows, weekdays in
                let names =
                    weekdays.count == 7 ? text("planSummary.everyDay") : weekdays.map(day).joined(separator: ", ")
                return "\(names): \(windows)"
            }
            return text("planSummary.randomWindows", ["windows": described.joined(separator: "; ")])
        case .weekly(let weekday, let time):
            return text("planSummary.weekly", ["day": day(weekday), "time": time.description])
        case .monthly(let dayOfMonth, let time):
            return dayOfMonth == -1
                ? text("planSummary.monthlyLast", ["time": time.description])
                : text("planSummary.monthly", ["day": self.dayOfMonth(dayOfMonth), "time": time.description])
        case .relative(let anchor, let offsets, let every, let count, let time):
            let anchorName = text("planAnchor.\(anchor.rawValue)")
            if let every, let count {
                return text(
                    "planSummary.relativeRepeat",
                    [
                        "every": localizer.text("unit.day", count: every, language), "count": String(count),
                        "anchor": anchorName,
                        "time": time.description,
                        "first": String(offsets.first ?? 0),
                    ])
            }
            return text(
                "planSummary.relative",
                [
                    "days": localizer.text(
                        "planSummary.dayNumbers", count: offsets.count, language,
                        ["days": offsets.map(String.init).joined(separator: ", ")]),
                    "anchor": anchorName, "time": time.description,
                ])
        case .appointment(let before, let after):
            return text("planSummary.appointment", ["before": duration(before), "after": duration(after)])
        case .once:
            return text("planSummary.once")
        case .onDemand:
            return text("planSummary.onDemand")
        }
    }
}
