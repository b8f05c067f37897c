import Foundation
import InterludeCore

/// One sample type's daily values as an accessible SVG: a bar per day on the left axis, the day's mood (0 to 100,
/// as the mood page shows it) as points joined on the right axis, a title and a description a screen reader reads,
/// and each bar and point named with its day and value. Drawn for the width it is shown at, numbers and dates in
/// the reader's language, the unit in words.
struct SampleDayChart: Sendable {
    let type: SampleType
    let rows: [SampleService.DayRow]
    let localizer: Localizer
    let language: Language
    let display: DateDisplay
    var width = desktopWidth

    static let desktopWidth = 640.0
    static let height = 270.0
    private static let left = 56.0
    private static let right = 40.0
    private static let top = 30.0
    private static let bottom = 40.0

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        localizer.text(key, language, arguments)
    }

    private var typeName: String { text("samples.type.\(type.rawValue)") }

    /// The unit in words ("steps", "beats per minute").
    private var unitName: String {
        localizer.has("samples.unit.\(type.rawValue)") ? text("samples.unit.\(type.rawValue)") : type.unit
    }

    private func number(_ value: Double) -> String { value.plainText(decimals: 1, in: language) }

    /// A mood of 0 to 1 as the 0 to 100 the person chose it on.
    private func moodText(_ mood: Double) -> String { (mood * 100).plainText(decimals: 0, in: language) }

    var svg: String {
        let plotWidth = width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let highest = max(
            rows.compactMap(\.value?.value).max() ?? 0, type.dailyAggregate == .mean ? type.range.lowerBound + 1 : 1)
        let slot = plotWidth / Double(max(rows.count, 1))
        func x(_ index: Int) -> Double { Self.left + slot * (Double(index) + 0.5) }
        func yValue(_ value: Double) -> Double { Self.top + plotHeight * (1 - value / highest) }
        func yMood(_ mood: Double) -> Double { Self.top + plotHeight * (1 - mood) }
        let title = text("samples.chart.title", ["type": typeName])
        var parts = [
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(n(width)) \##(n(Self.height))" width="\##(n(width))" role="img" aria-labelledby="samples-title samples-desc" class="chart">"##,
            "<title id=\"samples-title\">\(title.htmlEscaped)</title>",
            "<desc id=\"samples-desc\">\(description.htmlEscaped)</desc>",
            ##"<line x1="\##(n(Self.left))" y1="\##(n(Self.top + plotHeight))" x2="\##(n(Self.left + plotWidth))" y2="\##(n(Self.top + plotHeight))" stroke="#4a5a6a"/>"##,
        ]
        for step in 0...4 {
            let value = highest * Double(step) / 4
            parts.append(
                ##"<text x="\##(n(Self.left - 6))" y="\##(n(yValue(value) + 4))" text-anchor="end" font-size="12" fill="#1b2733">\##(number(value))</text>"##
            )
            parts.append(
                ##"<text x="\##(n(Self.left + plotWidth + 6))" y="\##(n(yMood(Double(step) / 4) + 4))" font-size="12" fill="#6a3d8f">\##(moodText(Double(step) / 4))</text>"##
            )
        }
        parts.append(##"<text x="4" y="14" font-size="12" fill="#1b2733">\##(unitName.htmlEscaped)</text>"##)
        parts.append(
            ##"<text x="\##(n(width - 4))" y="14" text-anchor="end" font-size="12" fill="#6a3d8f">\##(text("samples.chart.mood").htmlEscaped)</text>"##
        )
        for (index, row) in rows.enumerated() {
            if let day = row.value {
                let top = yValue(day.value)
                parts.append(
                    ##"<rect x="\##(n(x(index) - slot * 0.35))" y="\##(n(top))" width="\##(n(slot * 0.7))" height="\##(n(max(Self.top + plotHeight - top, 1)))" fill="#1f5f8b"><title>\##(display.date(row.date).htmlEscaped): \##(number(day.value)) \##(unitName.htmlEscaped)</title></rect>"##
                )
            }
            // The first and last day, and the middle one where there is room for three dates.
            let middle = width >= 500 && index == rows.count / 2
            if index == 0 || index == rows.count - 1 || middle {
                let anchor = index == 0 ? "start" : (index == rows.count - 1 ? "end" : "middle")
                let edge = index == 0 ? Self.left : (index == rows.count - 1 ? Self.left + plotWidth : x(index))
                parts.append(
                    ##"<text x="\##(n(edge))" y="\##(n(Self.height - 20))" text-anchor="\##(anchor)" font-size="12" fill="#1b2733">\##(display.date(row.date).htmlEscaped)</text>"##
                )
            }
        }
        let moods = rows.enumerated().compactMap { index, row in row.mood.map { (index, $0) } }
        if moods.count > 1 {
            let line = moods.map { "\(n(x($0.0))),\(n(yMood($0.1)))" }.joined(separator: " ")
            parts.append(
                ##"<polyline points="\##(line)" fill="none" stroke="#6a3d8f" stroke-width="2" stroke-dasharray="5 3"/>"##
            )
        }
        for (index, mood) in moods {
            parts.append(
                ##"<circle cx="\##(n(x(index)))" cy="\##(n(yMood(mood)))" r="4" fill="#6a3d8f"><title>\##(display.date(rows[index].date).htmlEscaped): \##(text("samples.chart.mood").htmlEscaped) \##(moodText(mood))</title></circle>"##
            )
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    /// What the chart shows, in words.
    var description: String {
        let values = rows.compactMap(\.value)
        guard let first = rows.first, let last = rows.last else { return "" }
        return text(
            "samples.chart.description",
            [
                "type": typeName, "from": display.date(first.date), "to": display.date(last.date),
                "days": String(values.count),
                "moods": String(rows.compactMap(\.mood).count),
                "mean": values.isEmpty ? "–" : number(values.map(\.value).reduce(0, +) / Double(values.count)),
                "unit": unitName,
            ])
    }

    private func n(_ value: Double) -> String { value.plainText() }
}
