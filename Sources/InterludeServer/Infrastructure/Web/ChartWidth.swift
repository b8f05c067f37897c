import InterludeCore

/// The width a chart is drawn for, in CSS pixels: a chart drawn for the width it is shown at keeps its text at the
/// size it was written in, where one drawn for a desktop and shrunk onto a phone makes it unreadable.
enum ChartWidth {
    static let desktop = 600.0
    static let range = 240...1200

    /// The width asked for, checked at the door; `otherwise` when none is asked for.
    static func checked(_ raw: Int?, otherwise: Double = desktop) throws -> Double {
        guard let raw else { return otherwise }
        guard range.contains(raw) else { throw AppError.field("width", .outOfRange, limit: range.upperBound) }
        return Double(raw)
    }
}
