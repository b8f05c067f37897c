import Foundation
import InterludeCore

/// One sample type's daily values as an accessible SVG: a bar per day on the left axis, the day's mood (0 to 1)
/// as points joined on the right axis, a title and a description a screen reader reads, and each bar and point
/// named with its day and value.
struct SampleDayChart: Sendable {
    let type: SampleType
    let rows: [SampleService.DayRow]
    let localizer: Localizer
    let language: Language
    let display: DateDisplay

    static let width = 640.0
    static let height = 260.0
    private static let left = 56.0
    private static let right = 44.0
    private static let top = 16.0
    private static let bottom = 40.0

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        localizer.text(key, language, arguments)
    }

    private var typeName: String { text("samples.type.\(type.rawValue)") }

    var svg: String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let highest = max(rows.compactMap(\.value?.value).max() ?? 0, type.dailyAggregate == .mean ? type.range.lowerBound + 1 : 1)
        let slot = plotWidth / Double(max(rows.count, 1))
        func x(_ index: Int) -> Double { Self.left + slot * (Double(index) + 0.5) }
        func yValue(_ value: Double) -> Double { Self.top + plotHeight * (1 - value / highest) }
        func yMood(_ mood: Double) -> Double { Self.top + plotHeight * (1 - mood) }
        let title = text("samples.chart.title", ["type": typeName])
        var parts = [
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(n(Self.width)) \##(n(Self.height))" role="img" aria-labelledby="samples-title samples-desc" class="chart">"##,
            "<title id=\"samples-title\">\(title.htmlEscaped)</title>",
            "<desc id=\"samples-desc\">\(description.htmlEscaped)</desc>",
            ##"<line x1="\##(n(Self.left))" y1="\##(n(Self.top + plotHeight))" x2="\##(n(Self.left + plotWidth))" y2="\##(n(Self.top + plotHeight))" stroke="#4a5a6a"/>"##,
        ]
        for step in 0...4 {
            let value = highest * Double(step) / 4
            parts.append(
                ##"<text x="\##(n(Self.left - 6))" y="\##(n(yValue(value) + 4))" text-anchor="end" font-size="11" fill="#1b2733">\##(value.plainText(decimals: 1))</text>"##)
            parts.append(
                ##"<text x="\##(n(Self.left + plotWidth + 6))" y="\##(n(yMood(Double(step) / 4) + 4))" font-size="11" fill="#6a3d8f">\##((Double(step) / 4).plainText())</text>"##)
        }
        parts.append(##"<text x="\##(n(Self.left - 6))" y="\##(n(Self.height - 4))" text-anchor="end" font-size="11" fill="#1b2733">\##(type.unit.htmlEscaped)</text>"##)
        parts.append(##"<text x="\##(n(Self.left + plotWidth + 6))" y="\##(n(Self.height - 4))" font-size="11" fill="#6a3d8f">\##(text("samples.chart.mood").htmlEscaped)</text>"##)
        for (index, row) in rows.enumerated() {
            if let day = row.value {
                let top = yValue(day.value)
                parts.append(
                    ##"<rect x="\##(n(x(index) - slot * 0.35))" y="\##(n(top))" width="\##(n(slot * 0.7))" height="\##(n(max(Self.top + plotHeight - top, 1)))" fill="#1f5f8b"><title>\##(display.date(row.date).htmlEscaped): \##(day.value.plainText(decimals: 1)) \##(type.unit.htmlEscaped)</title></rect>"##)
            }
            if index == 0 || index == rows.count - 1 || index == rows.count / 2 {
                let anchor = index == 0 ? "start" : (index == rows.count - 1 ? "end" : "middle")
                parts.append(
                    ##"<text x="\##(n(x(index)))" y="\##(n(Self.height - 20))" text-anchor="\##(anchor)" font-size="11" fill="#1b2733">\##(display.date(row.date).htmlEscaped)</text>"##)
            }
        }
        let moods = rows.enumerated().compactMap { index, row in row.mood.map { (index, $0) } }
        if moods.count > 1 {
            let line = moods.map { "\(n(x($0.0))),\(n(yMood($0.1)))" }.joined(separator: " ")
            parts.append(##"<polyline points="\##(line)" fill="none" stroke="#6a3d8f" stroke-width="2" stroke-dasharray="5 3"/>"##)
        }
        for (index, mood) in moods {
            parts.append(
                ##"<circle cx="\##(n(x(index)))" cy="\##(n(yMood(mood)))" r="4" fill="#6a3d8f"><title>\##(display.date(rows[index].date).htmlEscaped): \##(text("samples.chart.mood").htmlEscaped) \##(mood.plainText())</title></circle>"##)
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    /// What the chart shows, in words.
    var description: String {
        let values = rows.compactMap(\.value)
        guard let first = rows.first, let last = rows.last else { return "" }
        return text("samples.chart.description", [
            "type": typeName, "from": display.date(first.date), "to": display.date(last.date), "days": String(values.count),
            "moods": String(rows.compactMap(\.mood).count),
            "mean": values.isEmpty ? "–" : (values.map(\.value).reduce(0, +) / Double(values.count)).plainText(decimals: 1),
            "unit": type.unit,
        ])
    }

    private func n(_ value: Double) -> String { value.plainText() }
}
