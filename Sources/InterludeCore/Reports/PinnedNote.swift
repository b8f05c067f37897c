import Foundation

/// A note a therapist pins to a day of their client's chart, shown on both sides' charts.
public struct PinnedNote: Sendable, Equatable {
    public static let textMaxLength = 280

    public let day: LocalDate
    public let text: String

    public init(day: LocalDate, text: String) {
        self.day = day
        self.text = text
    }

    /// A note as it is sent: a `YYYY-MM-DD` day and up to 280 characters on one line, naming each field refused.
    public static func checked(day: String?, text: String?) throws(ValidationFailure) -> PinnedNote {
        var validator = FieldValidator()
        let date = validator.date(day, field: "day")
        if day == nil { validator.add("day", .required) }
        let text = validator.text(text, field: "text", maxLength: textMaxLength)
        try validator.check()
        guard let date, let text else { throw ValidationFailure(field: "day", code: .required) }
        return PinnedNote(day: date, text: text)
    }
}
