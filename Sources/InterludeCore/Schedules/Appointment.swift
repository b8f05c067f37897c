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
        let cleanComment = validator.text(comment, field: "comment", required: false, maxLength: commentMaxLength, lines: .multiple)
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
        try validator.check()
        return AppointmentDraft(title: cleanTitle!, startsAt: startsAt, endsAt: endsAt, comment: cleanComment)
    }

    /// Whether `instant` falls on a whole 5 minutes of the local clock (seconds zero).
    static func onGrid(_ instant: Date, _ zone: TimeZone) -> Bool {
        let seconds = instant.timeIntervalSince1970 + TimeInterval(zone.secondsFromGMT(for: instant))
        return seconds.truncatingRemainder(dividingBy: TimeInterval(gridMinutes * 60)) == 0
    }
}

/// How a study with arms assigns a new participant to one.
public enum ArmAllocation: String, Codable, Sendable, CaseIterable {
    /// In turn: the next participant joins the arm after the previous one's.
    case alternating
    case random

    /// The arm for the next participant, given how many joined so far.
    public func arm<G: RandomNumberGenerator>(of arms: [String], joinedSoFar: Int, using generator: inout G) -> String? {
        guard !arms.isEmpty else { return nil }
        switch self {
        case .alternating: return arms[joinedSoFar % arms.count]
        case .random: return arms.randomElement(using: &generator)
        }
    }
}
