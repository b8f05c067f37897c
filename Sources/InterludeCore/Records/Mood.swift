import Foundation

/// How the person feels, reported whenever they like: a valence from 0 (not good at all) to 1 (great), the moment
/// it is about, which they may change, and a note for themselves.
public struct Mood: Codable, Sendable, Equatable {
    public static let noteMaxLength = 2000
    public static let valenceRange: ClosedRange<Double> = 0...1

    public var valence: Double
    public var recordedAt: Date
    public var note: String?

    public init(valence: Double, recordedAt: Date, note: String? = nil) {
        self.valence = valence
        self.recordedAt = recordedAt
        self.note = note
    }

    /// Checks a report as entered: a valence between 0 and 1, a moment not in the future (a fast clock forgiven),
    /// a note of running text.
    public static func validate(valence: Double?, recordedAt: Date?, note: String?, now: Date) throws(ValidationFailure)
        -> Mood
    {
        var validator = FieldValidator()
        let cleanValence = validator.number(valence, field: "valence", required: true, in: valenceRange)
        if let recordedAt {
            if recordedAt > now.addingTimeInterval(Sample.clockTolerance) { validator.add("recordedAt", .outOfRange) }
        } else {
            validator.add("recordedAt", .required)
        }
        let cleanNote = validator.text(note, field: "note", required: false, maxLength: noteMaxLength, lines: .multiple)
        try validator.check()
        return Mood(valence: cleanValence!, recordedAt: recordedAt!, note: cleanNote)
    }
}
