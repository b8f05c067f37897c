import Fluent
import Foundation
import InterludeCore
import Vapor

/// A period day by day in a participant's local time, with the UTC offset of each day so daylight-saving
/// changes show.
struct PreviewTable: Encodable, Sendable {
    struct Item: Encodable, Sendable {
        var title: String
        var opens: String
        var closes: String
    }

    struct Day: Encodable, Sendable {
        var date: String
        var label: String
        var offset: String
        var offsetChanged: Bool
        var items: [Item]
        var hasItems: Bool
    }

    var timeZone: String
    var days: [Day]
    var count: Int

    init(
        from: LocalDate, days: Int, zone: TimeZone, language: Language, localizer: Localizer,
        items: [(String, Occurrence)]
    ) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language == .de ? "de_AT" : "en_GB")
        formatter.timeZone = .gmt
        formatter.setLocalizedDateFormatFromTemplate("EEE d MMM yyyy")
        let byDay = Dictionary(grouping: items) { LocalDate($0.1.opensAt, in: zone) }
        var previousOffset: Int?
        var result: [Day] = []
        for index in 0..<days {
            let date = from.adding(days: index)
            let noon = LocalDateTime(date: date, time: LocalTime(hour: 12, minute: 0)!).instant(in: zone)
            let offset = zone.secondsFromGMT(for: noon)
            let entries = (byDay[date] ?? []).sorted { $0.1.opensAt < $1.1.opensAt }.map { title, occurrence in
                let closes = LocalDateTime(occurrence.closesAt, in: zone)
                return Item(
                    title: title, opens: LocalDateTime(occurrence.opensAt, in: zone).time.description,
                    closes: closes.date == date ? closes.time.description : "\(closes.date) \(closes.time)")
            }
            result.append(
                Day(
                    date: date.description,
                    label: formatter.string(
                        from: LocalDateTime(date: date, time: LocalTime(hour: 12, minute: 0)!).instant(in: .gmt)),
                    offset: Self.offset(offset), offsetChanged: previousOffset != nil && previousOffset != offset,
                    items: entries, hasItems: !entries.isEmpty))
            previousOffset = offset
        }
        self.timeZone = zone.identifier
        self.days = result
        self.count = items.count
    }

    static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "−" : "+"
        let minutes = abs(seconds) / 60
        return String(format: "UTC%@%02d:%02d", sign, minutes / 60, minutes % 60)
    }
}
