import Foundation

/// A checked appointment for a therapy session, as a patient or therapist enters it.
public struct AppointmentDraft: Sendable, Equatable {
    public static let titleMaxLength = 200
    public static let commentMaxLength = 2000
    public static let gridMinutes = 5
    public static let longestMinutes = 12 * 60

    public var title: String
    public var startsAt: Date
    public var endsAt: Date
    public var comment: String?

    /// Title required; start and end on the 5-minute grid of the person's local clock; at least 5 minutes and at
    /// most 12 hours long; end after start.
    public static func validate(
        title: String?, startsAt: Date, endsAt: Date, comment: String?, timeZone: TimeZone
    ) throws(ValidationFailure) -> AppointmentDraft {
        var validator = FieldValidator()
        let cleanTitle = validator.text(title, field: "title", maxLength: titleMaxLength)
        let cleanComment = validator.text(
            comment, field: "comment", required: false, maxLength: commentMaxLength, lines: .multiple)
        checkTimes(startsAt: startsAt, endsAt: endsAt, timeZone: timeZone, into: &validator)
        try validator.check()
        return AppointmentDraft(title: cleanTitle!, startsAt: startsAt, endsAt: endsAt, comment: cleanComment)
    }

    /// Start and end on the grid, end after start, between 5 minutes and 12 hours apart.
    static func checkTimes(startsAt: Date, endsAt: Date, timeZone: TimeZone, into validator: inout FieldValidator) {
        for (field, instant) in [("startsAt", startsAt), ("endsAt", endsAt)] where !onGrid(instant, timeZone) {
            validator.add(field, .invalidValue)
        }
        let minutes = endsAt.timeIntervalSince(startsAt) / 60
        if endsAt <= startsAt {
            validator.add("endsAt", .invalidValue)
        } else if minutes < Double(gridMinutes) {
            validator.add("endsAt", .tooShort, limit: gridMinutes)
        } else if minutes > Double(longestMinutes) {
            validator.add("endsAt", .tooLong, limit: longestMinutes)
        }
    }

    /// Whether `instant` falls on a whole 5 minutes of the local clock (seconds zero).
    static func onGrid(_ instant: Date, _ zone: TimeZone) -> Bool {
        let seconds = instant.timeIntervalSince1970 + TimeInterval(zone.secondsFromGMT(for: instant))
        return seconds.truncatingRemainder(dividingBy: TimeInterval(gridMinutes * 60)) == 0
    }
}

/// What a patient asks of a session their therapist booked: to move it to another time, or to cancel it.
public enum AppointmentRequestKind: String, Codable, Sendable, CaseIterable {
    case move
    case cancel
}

/// A patient's checked request about a session their therapist booked; the therapist decides.
public struct AppointmentRequestDraft: Sendable, Equatable {
    public static let noteMaxLength = 500

    public var kind: AppointmentRequestKind
    /// The time asked for, for a move.
    public var startsAt: Date?
    public var endsAt: Date?
    public var note: String?

    /// A move names a new time in the future with the rules of any appointment; a cancellation names none.
    public static func validate(
        kind: AppointmentRequestKind, startsAt: Date?, endsAt: Date?, note: String?, timeZone: TimeZone, now: Date
    ) throws(ValidationFailure) -> AppointmentRequestDraft {
        var validator = FieldValidator()
        let cleanNote = validator.text(note, field: "note", required: false, maxLength: noteMaxLength, lines: .multiple)
        switch kind {
        case .cancel:
            if startsAt != nil { validator.add("startsAt", .notAllowed) }
            if endsAt != nil { validator.add("endsAt", .notAllowed) }
        case .move:
            if startsAt == nil { validator.add("startsAt", .required) }
            if endsAt == nil { validator.add("endsAt", .required) }
            if let startsAt, let endsAt {
                AppointmentDraft.checkTimes(startsAt: startsAt, endsAt: endsAt, timeZone: timeZone, into: &validator)
                if startsAt <= now { validator.add("startsAt", .outOfRange) }
            }
        }
        try validator.check()
        return AppointmentRequestDraft(kind: kind, startsAt: startsAt, endsAt: endsAt, note: cleanNote)
    }
}
