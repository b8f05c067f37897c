import Foundation

/// A treatment the person receives or received, from a start date to an optional end date.
public struct Therapy: Codable, Sendable, Equatable {
    /// The fourteen kinds of tinnitus therapy the record distinguishes.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case auditoryStimulation
        case biofeedback
        case dentalJawTreatment
        case hearingAid
        case medicalTreatment
        case neurofeedback
        case physicalTherapy
        case psychotherapy
        case sportExercise
        case maskerNoiser
        case retrainingTherapy
        case traditionalChineseMedicine
        case transcranialMagneticStimulation
        case other
    }

    public static let nameMaxLength = 200
    public static let noteMaxLength = 5000
    /// An end date this close ahead is announced to the person.
    public static let endReminderDays = 7

    public var name: String
    public var kind: Kind
    public var startDate: LocalDate
    public var endDate: LocalDate?
    public var note: String?

    public init(name: String, kind: Kind, startDate: LocalDate, endDate: LocalDate?, note: String?) {
        self.name = name
        self.kind = kind
        self.startDate = startDate
        self.endDate = endDate
        self.note = note
    }

    public static func validate(
        name: String?, kind: String?, startDate: String?, endDate: String?, note: String?
    ) throws(ValidationFailure) -> Therapy {
        var validator = FieldValidator()
        let cleanName = validator.text(name, field: "name", maxLength: nameMaxLength)
        let parsedKind = kind.flatMap(Kind.init(rawValue:))
        if parsedKind == nil { validator.add("type", (kind ?? "").isEmpty ? .required : .notAnOption) }
        let start = startDate.flatMap(LocalDate.init)
        if start == nil { validator.add("startDate", (startDate ?? "").isEmpty ? .required : .invalidFormat) }
        var end: LocalDate?
        if let endDate, !endDate.isEmpty {
            end = LocalDate(endDate)
            if end == nil {
                validator.add("endDate", .invalidFormat)
            } else if let start, let end, end < start {
                validator.add("endDate", .outOfRange)
            }
        }
        let cleanNote = validator.text(note, field: "note", required: false, maxLength: noteMaxLength, lines: .multiple)
        try validator.check()
        return Therapy(name: cleanName!, kind: parsedKind!, startDate: start!, endDate: end, note: cleanNote)
    }

    /// Still going on `day`: started, and not ended before it.
    public func isOngoing(on day: LocalDate) -> Bool {
        startDate <= day && (endDate.map { day <= $0 } ?? true)
    }

    /// Whether `day` falls in the days before the end date when the person is reminded of it.
    public func endIsNear(on day: LocalDate) -> Bool {
        guard let endDate else { return false }
        let left = endDate.daysSinceEpoch - day.daysSinceEpoch
        return (0...Self.endReminderDays).contains(left)
    }

    /// When the person is reminded that the therapy ends: 9:00 on the seventh day before its end (a moment that
    /// may have passed when the end is entered late; the reminder then goes at once); nil without an end or from the
    /// end day on. It depends on the end date alone, so an edit that keeps the end keeps the reminder.
    public func endReminder(now: Date, in zone: TimeZone) -> Date? {
        guard let endDate, endDate > LocalDate(now, in: zone),
            let morning = LocalDateTime(date: endDate.adding(days: -Self.endReminderDays), hour: 9, minute: 0)
        else { return nil }
        return morning.instant(in: zone)
    }

    /// Ongoing ones first, then by kind, then newest start first.
    public static func ordered(_ therapies: [Therapy], on day: LocalDate) -> [Therapy] {
        therapies.sorted { precedes($0, $1, on: day) }
    }

    /// A key that orders therapies that way when compared as text, lowest first.
    public static func sortKey(_ therapy: Therapy, on day: LocalDate) -> String {
        let kind = Kind.allCases.firstIndex(of: therapy.kind) ?? 0
        return (therapy.isOngoing(on: day) ? "0" : "1") + SortKey.number(kind)
            + SortKey.reversed(therapy.startDate.description)
    }

    /// Whether `lhs` comes before `rhs` in that order.
    public static func precedes(_ lhs: Therapy, _ rhs: Therapy, on day: LocalDate) -> Bool {
        sortKey(lhs, on: day) < sortKey(rhs, on: day)
    }
}
