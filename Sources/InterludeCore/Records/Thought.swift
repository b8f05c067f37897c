import Foundation

/// Who put a thought on the person's list: they recorded it, or their therapist added it as an example.
public enum ThoughtOrigin: String, Codable, Sendable, CaseIterable {
    case patient
    case therapist
}

/// A difficult thought as the person wrote it down. Each time it comes back is an occurrence; the same words
/// written again, whatever their case, spacing or Unicode form, are the same thought.
public struct Thought: Codable, Sendable, Equatable {
    public static let textMaxLength = 500

    public var text: String
    public var origin: ThoughtOrigin
    /// When it was first recorded or added.
    public var addedAt: Date

    public init(text: String, origin: ThoughtOrigin, addedAt: Date) {
        self.text = text
        self.origin = origin
        self.addedAt = addedAt
    }

    /// What two texts must share to be the same thought: compatibility-normalised (NFKC), case-folded, spaces
    /// trimmed and every run of white space one space.
    public static func matchKey(_ text: String) -> String {
        let folded = text.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive], locale: nil)
            .precomposedStringWithCompatibilityMapping
        return folded.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The words as written, checked: one line of text, not empty.
    public static func validate(text: String?, field: String = "text") throws(ValidationFailure) -> String {
        var validator = FieldValidator()
        let clean = validator.text(text, field: field, maxLength: textMaxLength)
        try validator.check()
        return clean!
    }
}

/// One time a thought came back: when, how it felt before the defusion exercise and after it (from -1, most
/// negative, to 1, most positive; the pair is the research measure), where if the person chose to say, and a
/// note for themselves.
public struct ThoughtOccurrence: Codable, Sendable, Equatable {
    public static let ratingRange: ClosedRange<Double> = -1...1
    public static let noteMaxLength = 2000

    public var thoughtID: UUID
    public var recordedAt: Date
    public var ratingBefore: Double
    public var ratingAfter: Double
    public var location: Location?
    public var note: String?

    public struct Location: Codable, Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        /// How far off the position may be, in metres, as the device reported it.
        public var accuracy: Double?

        public init(latitude: Double, longitude: Double, accuracy: Double? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.accuracy = accuracy
        }
    }

    /// An occurrence's own fields, checked before it is known which thought it belongs to.
    public struct Fields: Sendable, Equatable {
        public var recordedAt: Date
        public var ratingBefore: Double
        public var ratingAfter: Double
        public var location: Location?
        public var note: String?

        public init(recordedAt: Date, ratingBefore: Double, ratingAfter: Double, location: Location?, note: String?) {
            self.recordedAt = recordedAt
            self.ratingBefore = ratingBefore
            self.ratingAfter = ratingAfter
            self.location = location
            self.note = note
        }

        public func occurrence(of thoughtID: UUID) -> ThoughtOccurrence {
            ThoughtOccurrence(
                thoughtID: thoughtID, recordedAt: recordedAt, ratingBefore: ratingBefore, ratingAfter: ratingAfter,
                location: location,
                note: note)
        }
    }

    public init(
        thoughtID: UUID, recordedAt: Date, ratingBefore: Double, ratingAfter: Double, location: Location? = nil,
        note: String? = nil
    ) {
        self.thoughtID = thoughtID
        self.recordedAt = recordedAt
        self.ratingBefore = ratingBefore
        self.ratingAfter = ratingAfter
        self.location = location
        self.note = note
    }

    /// How much the exercise changed the rating: positive when the thought felt less negative afterwards.
    public var change: Double { ratingAfter - ratingBefore }

    /// Checks an occurrence as entered: both ratings given and on the scale (there is no default to fall back
    /// on), a moment not in the future (a fast clock forgiven), a position on the globe, a note of running text.
    public static func validate(
        recordedAt: Date?, ratingBefore: Double?, ratingAfter: Double?, location: Location?, note: String?, now: Date
    ) throws(ValidationFailure) -> Fields {
        var validator = FieldValidator()
        let before = validator.number(ratingBefore, field: "ratingBefore", required: true, in: ratingRange)
        let after = validator.number(ratingAfter, field: "ratingAfter", required: true, in: ratingRange)
        if let recordedAt {
            if recordedAt > now.addingTimeInterval(Sample.clockTolerance) { validator.add("recordedAt", .outOfRange) }
        } else {
            validator.add("recordedAt", .required)
        }
        if let location {
            validator.number(location.latitude, field: "location.latitude", in: -90...90)
            validator.number(location.longitude, field: "location.longitude", in: -180...180)
            validator.number(location.accuracy, field: "location.accuracy", in: 0...100_000)
        }
        let cleanNote = validator.text(note, field: "note", required: false, maxLength: noteMaxLength, lines: .multiple)
        try validator.check()
        return Fields(
            recordedAt: recordedAt!, ratingBefore: before!, ratingAfter: after!, location: location, note: cleanNote)
    }
}
