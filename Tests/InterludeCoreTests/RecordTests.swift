import Foundation
import InterludeCore
import Testing

@Suite("Records: events, therapies and audiograms as the person enters them")
struct RecordTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("an event needs a title, a moment and a known type; a study's own types count")
    func events() throws {
        let event = try HealthEvent.validate(
            title: " Loud concert ", occurredAt: now, type: "tinnitusAttack", description: "")
        #expect(event.title == "Loud concert" && event.description == nil)
        #expect(event.matches("LOUD concert") && !event.matches("quiet"))
        #expect(
            throws: ValidationFailure([
                FieldError(field: "title", code: .required), FieldError(field: "occurredAt", code: .required),
            ])
        ) {
            try HealthEvent.validate(title: " ", occurredAt: nil, type: "other", description: nil)
        }
        #expect(throws: ValidationFailure(field: "type", code: .notAnOption)) {
            try HealthEvent.validate(title: "Sauna", occurredAt: now, type: "sauna", description: nil)
        }
        #expect(
            try HealthEvent.validate(
                title: "Sauna", occurredAt: now, type: "sauna", description: nil, studyTypes: ["sauna"]
            ).type == "sauna")
    }

    @Test("a therapy ends on or after its start; ongoing ones come first; its end is announced a week ahead")
    func therapies() throws {
        let therapy = try Therapy.validate(
            name: "Hearing aid", kind: "hearingAid", startDate: "2026-03-01", endDate: "2026-06-30", note: nil)
        #expect(therapy.isOngoing(on: LocalDate("2026-06-30")!) && !therapy.isOngoing(on: LocalDate("2026-07-01")!))
        #expect(therapy.endIsNear(on: LocalDate("2026-06-23")!) && !therapy.endIsNear(on: LocalDate("2026-06-22")!))
        #expect(throws: ValidationFailure(field: "endDate", code: .outOfRange)) {
            try Therapy.validate(
                name: "TRT", kind: "retrainingTherapy", startDate: "2026-03-01", endDate: "2026-02-28", note: nil)
        }
        #expect(
            throws: ValidationFailure([
                FieldError(field: "type", code: .notAnOption), FieldError(field: "startDate", code: .invalidFormat),
            ])
        ) {
            try Therapy.validate(name: "Yoga", kind: "yoga", startDate: "2026-02-30", endDate: nil, note: nil)
        }
        let ended = try Therapy.validate(
            name: "Biofeedback", kind: "biofeedback", startDate: "2025-01-01", endDate: "2025-03-01", note: nil)
        let running = try Therapy.validate(
            name: "TRT", kind: "retrainingTherapy", startDate: "2026-01-01", endDate: nil, note: nil)
        #expect(
            Therapy.ordered([ended, therapy, running], on: LocalDate("2026-04-01")!).map(\.name) == [
                "Hearing aid", "TRT", "Biofeedback",
            ])
    }

    @Test(
        "thresholds lie from -10 to 120 dB HL in steps of 5, or are missing for no response; each ear, frequency and conduction once"
    )
    func audiograms() throws {
        let points =
            Audiogram.standardFrequencies.map { Audiogram.RawPoint(ear: "right", frequencyHz: $0, thresholdDbHL: 20) }
            + [Audiogram.RawPoint(ear: "left", frequencyHz: 6000, thresholdDbHL: nil)]
        let audiogram = try Audiogram.validate(measuredAt: now, points: points)
        #expect(audiogram.curve(.right).count == 7)
        #expect(audiogram.pureToneAverage(.right) == 20)
        #expect(audiogram.pureToneAverage(.left) == nil)
        #expect(throws: ValidationFailure(field: "points.0.thresholdDbHL", code: .invalidValue)) {
            try Audiogram.validate(measuredAt: now, points: [.init(ear: "left", frequencyHz: 1000, thresholdDbHL: 12)])
        }
        #expect(throws: ValidationFailure(field: "points.0.thresholdDbHL", code: .outOfRange, limit: 120)) {
            try Audiogram.validate(measuredAt: now, points: [.init(ear: "left", frequencyHz: 1000, thresholdDbHL: 125)])
        }
        #expect(throws: ValidationFailure(field: "points.1.frequencyHz", code: .duplicate)) {
            try Audiogram.validate(
                measuredAt: now,
                points: [
                    .init(ear: "left", frequencyHz: 1000, thresholdDbHL: 10),
                    .init(ear: "left", frequencyHz: 1000, thresholdDbHL: 15),
                ])
        }
        #expect(
            try Audiogram.validate(
                measuredAt: now,
                points: [
                    .init(ear: "left", frequencyHz: 1000, thresholdDbHL: 10),
                    .init(ear: "left", frequencyHz: 1000, thresholdDbHL: 15, conduction: "bone"),
                ]
            ).points.count == 2, "air and bone at the same frequency are two points")
        #expect(
            throws: ValidationFailure([
                FieldError(field: "points.0.ear", code: .notAnOption),
                FieldError(field: "points.0.frequencyHz", code: .outOfRange, limit: 20000),
            ])
        ) {
            try Audiogram.validate(measuredAt: now, points: [.init(ear: "middle", frequencyHz: 50, thresholdDbHL: 10)])
        }
        #expect(
            throws: ValidationFailure([
                FieldError(field: "measuredAt", code: .required), FieldError(field: "points", code: .required),
            ])
        ) {
            try Audiogram.validate(measuredAt: nil, points: [])
        }
    }
}
