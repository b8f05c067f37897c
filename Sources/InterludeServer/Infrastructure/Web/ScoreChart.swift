import Foundation
import InterludeCore

/// A score over time as an accessible SVG line chart: shaded interpretation bands, axis labels, a point per
/// response with its value, and a title and description a screen reader reads out.
struct ScoreChart: Sendable {
    struct Point: Sendable {
        let date: Date
        let value: Double
    }

    /// A time axis several charts share, with the moments of events marked on it, so scores and what happened
    /// line up from chart to chart.
    struct Timeline: Sendable {
        let span: ClosedRange<Date>
        let markers: [Marker]
    }

    struct Marker: Sendable {
        let date: Date
        let label: String
    }

    let title: String
    let points: [Point]
    let bands: [Band]
    /// The lowest and highest value the score can take.
    let range: ClosedRange<Double>
    /// The smallest step between two values; a band from 3 to 3 is drawn from 2.5 to 3.5.
    let resolution: Double
    let display: DateDisplay
    let language: Language
    let id: String
    /// The shared axis; without one the axis runs from the first to the last point.
    var timeline: Timeline? = nil

    static let width = 640.0
    static let height = 240.0
    private static let left = 48.0
    private static let right = 16.0
    private static let top = 16.0
    private static let bottom = 44.0

    /// Bands are told apart by alternating neutral shades and their labels; what is good or bad differs by
    /// instrument, so no colour suggests it.
    private static let bandFills = ["#e3eef6", "#f4f7fa"]

    var svg: String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let padding = bands.isEmpty ? 0 : resolution / 2
        let low = range.lowerBound - padding
        let high = max(range.upperBound + padding, low + 1)
        func y(_ value: Double) -> Double {
            Self.top + plotHeight * (1 - (min(max(value, low), high) - low) / (high - low))
        }
        let sorted = points.sorted { $0.date < $1.date }
        let first = timeline?.span.lowerBound ?? sorted.first?.date ?? .distantPast
        let last = timeline?.span.upperBound ?? sorted.last?.date ?? first
        let span = max(last.timeIntervalSince(first), 1)
        func x(_ date: Date) -> Double {
            sorted.count < 2 && timeline == nil
                ? Self.left + plotWidth / 2 : Self.left + plotWidth * date.timeIntervalSince(first) / span
        }
        var parts: [String] = []
        let titleID = "\(id)-title"
        let descriptionID = "\(id)-desc"
        parts.append(
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(Self.number(Self.width)) \##(Self.number(Self.height))" role="img" aria-labelledby="\##(titleID) \##(descriptionID)" class="chart">"##
        )
        parts.append("<title id=\"\(titleID)\">\(title.htmlEscaped)</title>")
        parts.append("<desc id=\"\(descriptionID)\">\(description.htmlEscaped)</desc>")
        for (index, band) in bands.sorted(by: { $0.min < $1.min }).enumerated() {
            let bandTop = y(band.max + padding)
            let bandBottom = y(band.min - padding)
            let fill = Self.bandFills[index % Self.bandFills.count]
            parts.append(
                ##"<rect x="\##(Self.number(Self.left))" y="\##(Self.number(bandTop))" width="\##(Self.number(plotWidth))" height="\##(Self.number(max(bandBottom - bandTop, 1)))" fill="\##(fill)"><title>\##(band.label.text(language).htmlEscaped): \##(Self.number(band.min))–\##(Self.number(band.max))</title></rect>"##
            )
            parts.append(
                ##"<text x="\##(Self.number(Self.left + plotWidth - 4))" y="\##(Self.number(bandTop + 12))" text-anchor="end" font-size="11" fill="#4a5a6a">\##(band.label.text(language).htmlEscaped)</text>"##
            )
        }
        parts.append(
            ##"<line x1="\##(Self.number(Self.left))" y1="\##(Self.number(Self.top))" x2="\##(Self.number(Self.left))" y2="\##(Self.number(Self.top + plotHeight))" stroke="#4a5a6a"/>"##
        )
        parts.append(
            ##"<line x1="\##(Self.number(Self.left))" y1="\##(Self.number(Self.top + plotHeight))" x2="\##(Self.number(Self.left + plotWidth))" y2="\##(Self.number(Self.top + plotHeight))" stroke="#4a5a6a"/>"##
        )
        for tick in yTicks(low: low, high: high) {
            parts.append(
                ##"<text x="\##(Self.number(Self.left - 6))" y="\##(Self.number(y(tick) + 4))" text-anchor="end" font-size="11" fill="#1b2733">\##(Self.number(tick))</text>"##
            )
        }
        let labelled =
            timeline.map { _ in [first, first.addingTimeInterval(span / 2), last] }
            ?? (sorted.count <= 2
                ? sorted.map(\.date) : [sorted.first!.date, sorted[sorted.count / 2].date, sorted.last!.date])
        for (index, date) in labelled.enumerated() {
            let anchor =
                labelled.count == 1
                ? "middle" : (index == 0 ? "start" : (index == labelled.count - 1 ? "end" : "middle"))
            parts.append(
                ##"<text x="\##(Self.number(x(date)))" y="\##(Self.number(Self.height - 16))" text-anchor="\##(anchor)" font-size="11" fill="#1b2733">\##(display.date(date).htmlEscaped)</text>"##
            )
        }
        for marker in timeline?.markers ?? [] {
            let at = Self.number(x(marker.date))
            parts.append(
                ##"<g class="event-marker"><title>\##(display.dateTime(marker.date).htmlEscaped): \##(marker.label.htmlEscaped)</title><line x1="\##(at)" y1="\##(Self.number(Self.top))" x2="\##(at)" y2="\##(Self.number(Self.top + plotHeight))" stroke="#8a5a00" stroke-width="1.5" stroke-dasharray="4 3"/><path d="M\##(at) \##(Self.number(Self.top + 8)) l-5 -8 h10 z" fill="#8a5a00"/></g>"##
            )
        }
        if sorted.count > 1 {
            let line = sorted.map { "\(Self.number(x($0.date))),\(Self.number(y($0.value)))" }.joined(separator: " ")
            parts.append(##"<polyline points="\##(line)" fill="none" stroke="#1f5f8b" stroke-width="2.5"/>"##)
        }
        for point in sorted {
            parts.append(
                ##"<circle cx="\##(Self.number(x(point.date)))" cy="\##(Self.number(y(point.value)))" r="4.5" fill="#1f5f8b"><title>\##(display.dateTime(point.date).htmlEscaped): \##(Self.number(point.value))</title></circle>"##
            )
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    static let sparklineWidth = 160.0
    static let sparklineHeight = 36.0
    /// A sparkline draws at most this many points, each the mean of the values of its stretch of time, so it stays
    /// small whatever the length of the history.
    static let sparklinePoints = 60

    /// The score over time as a small line without axes, the latest value marked, for a summary; its description
    /// is read out in place of the picture.
    var sparkline: String {
        let sorted = points.sorted { $0.date < $1.date }
        guard let first = sorted.first, let last = sorted.last else { return "" }
        let low = range.lowerBound
        let high = max(range.upperBound, low + 1)
        let span = max(last.date.timeIntervalSince(first.date), 1)
        let buckets = min(sorted.count, Self.sparklinePoints)
        var sums = [(total: Double, count: Int, at: Double)](repeating: (0, 0, 0), count: buckets)
        for point in sorted {
            let at = point.date.timeIntervalSince(first.date) / span
            let bucket = min(Int(at * Double(buckets)), buckets - 1)
            sums[bucket].total += point.value
            sums[bucket].count += 1
            sums[bucket].at += at
        }
        let inset = 4.0
        func x(_ share: Double) -> Double {
            sorted.count < 2 ? Self.sparklineWidth / 2 : inset + (Self.sparklineWidth - 2 * inset) * share
        }
        func y(_ value: Double) -> Double {
            inset + (Self.sparklineHeight - 2 * inset) * (1 - (min(max(value, low), high) - low) / (high - low))
        }
        let line = sums.filter { $0.count > 0 }
            .map { "\(Self.number(x($0.at / Double($0.count)))),\(Self.number(y($0.total / Double($0.count))))" }
        var parts = [
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(Self.number(Self.sparklineWidth)) \##(Self.number(Self.sparklineHeight))" role="img" aria-label="\##(description.htmlEscaped)" class="sparkline">"##
        ]
        if line.count > 1 {
            parts.append(
                ##"<polyline points="\##(line.joined(separator: " "))" fill="none" stroke="#1f5f8b" stroke-width="2"/>"##
            )
        }
        parts.append(
            ##"<circle cx="\##(Self.number(x(sorted.count < 2 ? 0.5 : 1)))" cy="\##(Self.number(y(last.value)))" r="3.5" fill="#1f5f8b"/></svg>"##
        )
        return parts.joined()
    }

    /// What the chart shows, in words.
    var description: String {
        let sorted = points.sorted { $0.date < $1.date }
        guard let first = sorted.first, let last = sorted.last else { return "" }
        let band =
            bands.first { last.value >= $0.min && last.value <= $0.max }.map { " (\($0.label.text(language)))" } ?? ""
        let count = sorted.count
        let events = timeline?.markers.count ?? 0
        switch language {
        case .de:
            return
                "\(count) Werte vom \(display.date(first.date)) bis \(display.date(last.date)); zuletzt \(Self.number(last.value))\(band)."
                + (events > 0 ? " \(events) \(events == 1 ? "Ereignis" : "Ereignisse") markiert." : "")
        case .en:
            return
                "\(count) value\(count == 1 ? "" : "s") from \(display.date(first.date)) to \(display.date(last.date)); latest \(Self.number(last.value))\(band)."
                + (events > 0 ? " \(events) event\(events == 1 ? "" : "s") marked." : "")
        }
    }

    /// Band boundaries when there are bands, else five even steps.
    private func yTicks(low: Double, high: Double) -> [Double] {
        if !bands.isEmpty {
            return Array(Set([range.lowerBound, range.upperBound] + bands.map(\.min))).filter {
                $0 >= low && $0 <= high
            }.sorted()
        }
        return (0...4).map { low + (high - low) * Double($0) / 4 }
    }

    private static func number(_ value: Double) -> String { value.plainText() }
}
