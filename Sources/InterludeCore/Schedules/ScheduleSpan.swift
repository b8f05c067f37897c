/// How many days of a schedule are shown at once: two weeks unless asked, at most a year; a plan's preview while it
/// is written, at most about two months.
public enum ScheduleSpan {
    public static let defaultDays = 14
    public static let maximumDays = 366
    public static let maximumPreviewDays = 62

    /// The days asked for, when they are within a year.
    public static func days(_ asked: Int?) -> Int? {
        let days = asked ?? defaultDays
        return (1...maximumDays).contains(days) ? days : nil
    }

    /// A plan preview's length: what was asked, brought within 1…62 days.
    public static func previewDays(_ asked: Int?) -> Int {
        asked.map { min(max($0, 1), maximumPreviewDays) } ?? defaultDays
    }
}
