import Foundation
import InterludeCore
import Testing

@Suite("Thoughts: the same words are the same thought; ratings lie on the scale and are never assumed")
struct ThoughtTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(
        "texts that differ only in case, spacing or Unicode form match",
        arguments: [
            ("I am not good enough", "i AM NOT good enough"),
            ("  I am not good enough ", "I am not good enough"),
            ("I am   not\tgood\nenough", "I am not good enough"),
            ("Ich schaffe das nie, Zoë", "ich schaffe das nie, zoe\u{308}"),
            ("Das ist eine ﬁnale Niederlage", "Das ist eine finale Niederlage"),
            ("ＮＯＢＯＤＹ likes me", "nobody likes me"),
            ("Ça ne marchera jamais", "ÇA NE MARCHERA JAMAIS"),
            ("I am\u{00A0}useless", "I am useless"),
        ])
    func matching(_ pair: (String, String)) {
        #expect(Thought.matchKey(pair.0) == Thought.matchKey(pair.1))
    }

    @Test(
        "texts with other words, letters or punctuation do not match",
        arguments: [
            ("I am not good enough", "I am good enough"),
            ("Zoë", "Zoe"),
            ("Nobody likes me.", "Nobody likes me"),
            ("I failed", "I fail"),
        ])
    func notMatching(_ pair: (String, String)) {
        #expect(Thought.matchKey(pair.0) != Thought.matchKey(pair.1))
    }

    @Test("a thought's text is one line, not empty, at most 500 characters; it is kept as written, trimmed")
    func text() throws {
        #expect(try Thought.validate(text: "  Nobody likes me ") == "Nobody likes me")
        #expect(throws: ValidationFailure(field: "text", code: .required)) { try Thought.validate(text: "   ") }
        #expect(throws: ValidationFailure(field: "text", code: .required)) { try Thought.validate(text: nil) }
        #expect(throws: ValidationFailure(field: "text", code: .controlCharacter)) {
            try Thought.validate(text: "Nobody\nlikes me")
        }
        #expect(throws: ValidationFailure(field: "text", code: .tooLong, limit: 500)) {
            try Thought.validate(text: String(repeating: "a", count: 501))
        }
    }

    @Test(
        "both ratings are required and lie from -1 to 1; the moment is not in the future; a position lies on the globe")
    func occurrence() throws {
        let fields = try ThoughtOccurrence.validate(
            recordedAt: now, ratingBefore: -0.8, ratingAfter: -0.2,
            location: .init(latitude: 55.87, longitude: -4.29, accuracy: 30),
            note: "  on the bus ", now: now)
        let thoughtID = UUID()
        let occurrence = fields.occurrence(of: thoughtID)
        #expect(occurrence.thoughtID == thoughtID && occurrence.note == "on the bus")
        #expect(abs(occurrence.change - 0.6) < 1e-9)

        #expect(
            throws: ValidationFailure([
                FieldError(field: "ratingBefore", code: .required), FieldError(field: "ratingAfter", code: .required),
                FieldError(field: "recordedAt", code: .required),
            ])
        ) {
            try ThoughtOccurrence.validate(
                recordedAt: nil, ratingBefore: nil, ratingAfter: nil, location: nil, note: nil, now: now)
        }
        #expect(
            throws: ValidationFailure([
                FieldError(field: "ratingBefore", code: .outOfRange, limit: 1),
                FieldError(field: "ratingAfter", code: .outOfRange, limit: 1),
            ])
        ) {
            try ThoughtOccurrence.validate(
                recordedAt: now, ratingBefore: -1.5, ratingAfter: .nan, location: nil, note: nil, now: now)
        }
        #expect(throws: ValidationFailure(field: "recordedAt", code: .outOfRange)) {
            try ThoughtOccurrence.validate(
                recordedAt: now.addingTimeInterval(3_600), ratingBefore: 0, ratingAfter: 0, location: nil, note: nil,
                now: now)
        }
        #expect(
            throws: ValidationFailure([
                FieldError(field: "location.latitude", code: .outOfRange, limit: 90),
                FieldError(field: "location.longitude", code: .outOfRange, limit: 180),
            ])
        ) {
            try ThoughtOccurrence.validate(
                recordedAt: now, ratingBefore: 0, ratingAfter: 0, location: .init(latitude: 91, longitude: -181),
                note: nil, now: now)
        }
        let extremes = try ThoughtOccurrence.validate(
            recordedAt: now, ratingBefore: -1, ratingAfter: 1, location: nil, note: nil, now: now)
        #expect(extremes.ratingBefore == -1 && extremes.ratingAfter == 1)
    }
}
