import Foundation
import Testing

@testable import InterludeCore

@Suite("Health samples: units, ranges and batches")
struct SampleTests {
    let now = Date(timeIntervalSince1970: 1_772_438_400)  // 2026-03-02T08:00Z

    func raw(
        _ type: String, _ value: Double?, _ unit: String?, minutes: Double = 5, endingMinutesAgo: Double = 60,
        id: String = UUID().uuidString,
        motion: Int? = nil
    ) -> Sample.Raw {
        let end = now.addingTimeInterval(-endingMinutesAgo * 60)
        return Sample.Raw(
            type: type, value: value, unit: unit, start: end.addingTimeInterval(-minutes * 60), end: end, sourceID: id,
            source: Sample.Source(app: "Health", deviceName: "Watch", deviceModel: "Watch6,2", osVersion: "10.3.1"),
            motionContext: motion)
    }

    @Test(
        "values sent in another unit are stored in the type's canonical one",
        arguments: [
            ("distanceWalkingRunning", 2.5, "km", 2500.0),
            ("distanceWalkingRunning", 1, "mi", 1609.344),
            ("bodyMass", 154, "lb", 69.853_225),
            ("bodyMass", 72_500, "g", 72.5),
            ("exerciseTime", 0.5, "h", 30),
            ("heartRate", 72, "count/min", 72),
            ("walkingSpeed", 4.5, "km/hr", 1.25),
            ("heartRateVariabilitySDNN", 0.045, "s", 45),
            ("walkingDoubleSupport", 0.28, "1", 28),
            ("stepCount", 1200, "count", 1200),
        ])
    func conversion(type: String, value: Double, unit: String, expected: Double) throws {
        let sample = try Sample.validate(raw(type, value, unit), now: now)
        #expect(abs(sample.value - expected) < 1e-6, "\(sample.value)")
    }

    @Test(
        "every type has its canonical unit among the accepted ones, a range, and an Apple Health identifier that reads back"
    )
    func declarations() {
        for type in SampleType.allCases {
            #expect(type.acceptedUnits[type.unit] == 1, "\(type)")
            #expect(type.range.lowerBound < type.range.upperBound)
            #expect(SampleType(healthKitIdentifier: type.healthKitIdentifier) == type, "\(type.healthKitIdentifier)")
        }
        #expect(SampleType.heartRate.healthKitIdentifier == "HKQuantityTypeIdentifierHeartRate")
        #expect(
            SampleType.distanceWalkingRunning.healthKitIdentifier == "HKQuantityTypeIdentifierDistanceWalkingRunning")
        #expect(SampleType.stepCount.dailyAggregate == .sum && SampleType.heartRate.dailyAggregate == .mean)
    }

    @Test(
        "values outside the type's physiological range, in a unit of another type, or not numbers are refused by field")
    func refusals() {
        func codes(_ raw: Sample.Raw) -> [String: FieldError.Code] {
            do {
                _ = try Sample.validate(raw, now: now)
                return [:]
            } catch {
                return Dictionary(error.errors.map { ($0.field, $0.code) }, uniquingKeysWith: { first, _ in first })
            }
        }
        #expect(codes(raw("heartRate", 300, "/min")) == ["value": .outOfRange])
        #expect(codes(raw("heartRate", 1.2, "count/s")) == [:])
        #expect(codes(raw("heartRate", 0.2, "count/s")) == ["value": .outOfRange])
        #expect(codes(raw("bodyMass", 2000, "lb")) == ["value": .outOfRange])
        #expect(codes(raw("bodyMass", 70, "km")) == ["unit": .notAnOption])
        #expect(codes(raw("bodyMass", 70, nil)) == ["unit": .required])
        #expect(codes(raw("bodyMass", .nan, "kg")) == ["value": .outOfRange])
        #expect(codes(raw("bloodGlucose", 5, "mmol/L")) == ["type": .notAnOption])
        #expect(codes(raw("stepCount", 10, "count", minutes: 27 * 60)) == ["endsAt": .tooLong])
        #expect(codes(raw("stepCount", 10, "count", endingMinutesAgo: -30)) == ["endsAt": .afterDeadline])
        #expect(codes(raw("stepCount", 10, "count", endingMinutesAgo: -5)) == [:])
        #expect(codes(raw("heartRate", 70, "/min", motion: 7)) == ["motionContext": .notAnOption])
        #expect(codes(raw("heartRate", 70, "/min", id: " ")) == ["sourceId": .required])
        var backwards = raw("stepCount", 10, "count")
        backwards.end = backwards.start!.addingTimeInterval(-60)
        #expect(codes(backwards) == ["endsAt": .outOfRange])
        var twoLines = raw("stepCount", 10, "count")
        twoLines.source.deviceName = "Watch\nof someone"
        #expect(codes(twoLines) == ["source.deviceName": .controlCharacter])
    }

    @Test(
        "a batch keeps the valid samples and names each invalid one by its index; the same source id twice keeps the first"
    )
    func batch() throws {
        let batch = try Sample.validate(
            batch: [
                raw("stepCount", 100, "count", id: "a"), raw("heartRate", 400, "/min", id: "b"),
                raw("stepCount", 50, "count", id: "a"),
                raw("walkingSpeed", 1.3, "m/s", id: "c"),
            ],
            now: now)
        #expect(batch.accepted.map(\.index) == [0, 3])
        #expect(batch.rejected.map(\.index) == [1, 2])
        #expect(batch.rejected.first?.errors == [FieldError(field: "samples[1].value", code: .outOfRange, limit: 260)])
        #expect(batch.rejected.last?.errors == [FieldError(field: "samples[2].sourceId", code: .duplicate)])
    }

    @Test("a batch over 5000 samples is refused whole")
    func batchLimit() {
        let many = (0...Sample.batchLimit).map { raw("stepCount", 1, "count", id: "s\($0)") }
        #expect(throws: ValidationFailure(field: "samples", code: .tooLong, limit: 5000)) {
            try Sample.validate(batch: many, now: now)
        }
        #expect((try? Sample.validate(batch: Array(many.dropLast()), now: now).accepted.count) == 5000)
    }
}
