import Foundation
import InterludeCore
import Testing

@Suite("Treatment updates: a field left out stays, an empty one clears, the end never before the start")
struct TreatmentUpdateTests {
    let start = LocalDate("2026-03-01")!

    @Test("left out, cleared and set are three different things")
    func presence() throws {
        let untouched = try TreatmentUpdate.validate(
            displayName: nil, therapyStart: nil, therapyEnd: nil, current: (start, nil))
        #expect(untouched == TreatmentUpdate())
        let cleared = try TreatmentUpdate.validate(
            displayName: " ", therapyStart: "", therapyEnd: nil, current: (start, nil))
        #expect(cleared.displayName == .some(nil) && cleared.therapyStart == .some(nil) && cleared.therapyEnd == nil)
        let set = try TreatmentUpdate.validate(
            displayName: " Ada L. ", therapyStart: nil, therapyEnd: "2026-06-30", current: (start, nil))
        #expect(set.displayName == .some("Ada L.") && set.therapyEnd == .some(LocalDate("2026-06-30")))
    }

    @Test("the end is checked against the start sent or the one stored")
    func order() throws {
        #expect(throws: ValidationFailure(field: "therapyEnd", code: .outOfRange)) {
            try TreatmentUpdate.validate(
                displayName: nil, therapyStart: nil, therapyEnd: "2026-02-28", current: (start, nil))
        }
        #expect(throws: ValidationFailure(field: "therapyEnd", code: .outOfRange)) {
            try TreatmentUpdate.validate(
                displayName: nil, therapyStart: "2026-07-01", therapyEnd: nil, current: (start, LocalDate("2026-06-30"))
            )
        }
        #expect(
            try TreatmentUpdate.validate(
                displayName: nil, therapyStart: "2026-06-30", therapyEnd: "2026-06-30", current: (nil, nil)
            ).therapyEnd != nil)
        #expect(
            throws: ValidationFailure([
                FieldError(field: "displayName", code: .tooLong, limit: 120),
                FieldError(field: "therapyStart", code: .invalidFormat),
            ])
        ) {
            try TreatmentUpdate.validate(
                displayName: String(repeating: "x", count: 121), therapyStart: "1.3.2026", therapyEnd: nil,
                current: (nil, nil))
        }
    }

    @Test("a status is one of the three; an ended treatment stays ended")
    func status() throws {
        #expect(
            try TreatmentUpdate.validate(
                displayName: nil, therapyStart: nil, therapyEnd: nil, status: "paused", current: (nil, nil)
            ).status == .paused)
        #expect(throws: ValidationFailure(field: "status", code: .notAnOption)) {
            try TreatmentUpdate.validate(
                displayName: nil, therapyStart: nil, therapyEnd: nil, status: "finished", current: (nil, nil))
        }
        #expect(TreatmentStatus.active.canChange(to: .paused) && TreatmentStatus.paused.canChange(to: .active))
        #expect(TreatmentStatus.paused.canChange(to: .ended) && TreatmentStatus.ended.canChange(to: .ended))
        #expect(!TreatmentStatus.ended.canChange(to: .active) && !TreatmentStatus.ended.canChange(to: .paused))
    }
}
