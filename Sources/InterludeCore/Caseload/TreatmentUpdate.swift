import Foundation

/// What a therapist changes about a client's treatment: the name the client is shown under in their caseload, and
/// the therapy's first and last day, and whether the treatment goes on, pauses or ends. A field left out stays; an
/// empty one clears it.
public struct TreatmentUpdate: Sendable, Equatable {
    public static let displayNameMaxLength = 120

    /// nil: unchanged; `.some(nil)`: cleared.
    public var displayName: String??
    public var therapyStart: LocalDate??
    public var therapyEnd: LocalDate??
    public var status: TreatmentStatus?

    public init(
        displayName: String?? = nil, therapyStart: LocalDate?? = nil, therapyEnd: LocalDate?? = nil,
        status: TreatmentStatus? = nil
    ) {
        self.displayName = displayName
        self.therapyStart = therapyStart
        self.therapyEnd = therapyEnd
        self.status = status
    }

    /// Checks the fields as sent (`YYYY-MM-DD` dates, a one-line name), the end not before the start once both
    /// are known (`current` are the stored ones).
    public static func validate(
        displayName: String?, therapyStart: String?, therapyEnd: String?, status: String? = nil,
        current: (start: LocalDate?, end: LocalDate?)
    ) throws(ValidationFailure) -> TreatmentUpdate {
        var validator = FieldValidator()
        var update = TreatmentUpdate()
        if let displayName {
            update.displayName = .some(
                validator.text(displayName, field: "displayName", required: false, maxLength: displayNameMaxLength))
        }
        func date(_ text: String?, _ field: String) -> LocalDate?? {
            guard let text else { return nil }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return .some(nil) }
            return .some(validator.date(trimmed, field: field))
        }
        update.therapyStart = date(therapyStart, "therapyStart")
        update.therapyEnd = date(therapyEnd, "therapyEnd")
        if let status, !status.isEmpty {
            update.status = TreatmentStatus(rawValue: status)
            if update.status == nil { validator.add("status", .notAnOption) }
        }
        let start = update.therapyStart ?? current.start
        let end = update.therapyEnd ?? current.end
        if validator.errors.isEmpty, let start, let end, end < start { validator.add("therapyEnd", .outOfRange) }
        try validator.check()
        return update
    }
}
