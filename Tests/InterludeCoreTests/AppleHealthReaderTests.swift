import Foundation
import InterludeCore
import Testing

@Suite("Reading samples from an Apple Health export and from CSV as the bytes arrive")
struct AppleHealthReaderTests {
    static let export = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!ELEMENT HealthData (ExportDate,Me,(Record|Workout)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          value         CDATA #IMPLIED
        >
        ]>
        <HealthData locale="en_GB">
         <ExportDate value="2026-11-20 08:00:00 +0100"/>
         <Me HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet"/>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Ada&apos;s Watch" sourceVersion="10.1" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:10.1&gt;" unit="count/min" creationDate="2026-11-19 07:01:00 +0100" startDate="2026-11-19 07:00:00 +0100" endDate="2026-11-19 07:00:00 +0100" value="64">
          <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="1"/>
         </Record>
         <Record type="HKQuantityTypeIdentifierWalkingDoubleSupportPercentage" sourceName="iPhone" unit="%" startDate="2026-11-19 09:00:00 +0100" endDate="2026-11-19 09:10:00 +0100" value="0.284"/>
         <Record type="HKQuantityTypeIdentifierBasalEnergyBurned" sourceName="iPhone" unit="kcal" startDate="2026-11-19 09:00:00 +0100" endDate="2026-11-19 09:10:00 +0100" value="12"/>
         <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2026-11-18 23:00:00 +0100" endDate="2026-11-19 01:30:00 +0100" value="HKCategoryValueSleepAnalysisAsleepCore"/>
         <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2026-11-18 22:30:00 +0100" endDate="2026-11-18 23:00:00 +0100" value="HKCategoryValueSleepAnalysisInBed"/>
         <Record type="HKQuantityTypeIdentifierDistanceWalkingRunning" sourceName="iPhone" unit="km" startDate="2026-11-19 10:00:00 -0500" endDate="2026-11-19 10:20:00 -0500" value="1.5"/>
        </HealthData>
        """

    static func read(_ text: String, chunk: Int) throws -> (samples: [Sample.Raw], other: Int) {
        var reader = AppleHealthReader()
        var samples: [Sample.Raw] = []
        let bytes = Array(text.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            samples += try reader.feed(bytes[start..<min(start + chunk, bytes.count)])
        }
        return (samples, reader.otherRecords)
    }

    @Test(
        "records of known types become samples whatever the chunks, other records are counted",
        arguments: [1, 7, 64, 100_000])
    func records(chunk: Int) throws {
        let (samples, other) = try Self.read(Self.export, chunk: chunk)
        #expect(
            samples.map(\.type) == ["heartRate", "walkingDoubleSupport", "sleepAnalysis", "distanceWalkingRunning"])
        #expect(other == 2, "basal energy and time in bed")
        let heart = samples[0]
        #expect(heart.value == 64 && heart.unit == "count/min" && heart.motionContext == 1)
        #expect(heart.start == Date(timeIntervalSince1970: 1_795_068_000), "07:00 at +01:00 is 06:00 UTC")
        #expect(
            heart.source
                == Sample.Source(
                    app: "Ada's Watch", deviceName: "Apple Watch", deviceModel: "Watch6,1", osVersion: "10.1"))
        let support = try Sample.validate(samples[1], now: .distantFuture)
        #expect(abs(support.value - 28.4) < 1e-9, "the export's fraction under % is a share of 100")
        #expect(samples[2].value == 150 && samples[2].unit == "min", "asleep from 23:00 to 01:30")
        #expect(try Sample.validate(samples[3], now: .distantFuture).value == 1500)
        #expect(samples[3].start == Date(timeIntervalSince1970: 1_795_100_400), "10:00 at -05:00 is 15:00 UTC")
    }

    @Test("the same export read twice gives the same source ids; different records get different ones")
    func stableIDs() throws {
        let first = try Self.read(Self.export, chunk: 13).samples.map(\.sourceID)
        let second = try Self.read(Self.export, chunk: 4096).samples.map(\.sourceID)
        #expect(first == second)
        #expect(Set(first.compactMap { $0 }).count == first.count)
    }

    @Test("a file that is not an export: an endless tag is refused, a malformed date is marked unreadable")
    func refused() throws {
        var reader = AppleHealthReader()
        #expect(throws: AppleHealthReader.Problem.tagTooLong) {
            _ = try reader.feed(
                Array("<Record type=\"".utf8)
                    + Array(repeating: UInt8(ascii: "a"), count: AppleHealthReader.tagLimit + 1))
        }
        let broken = try Self.read(
            #"<Record type="HKQuantityTypeIdentifierStepCount" unit="count" startDate="19.11.2026" endDate="2026-11-19 09:10:00 +0100" value="10"/>"#,
            chunk: 50)
        #expect(broken.samples.first?.unreadable == ["startsAt"])
        #expect(throws: ValidationFailure.self) { try Sample.validate(broken.samples[0], now: .distantFuture) }
    }

    @Test(
        "CSV: a header naming the columns, Interlude's or Apple Health's type names, ISO times; a missing header is refused"
    )
    func csv() throws {
        let text =
            "Type,Value,Unit,Start,End\r\nstepCount,1200,count,2026-11-19T08:00:00Z,2026-11-19T09:00:00Z\r\n"
            + "HKQuantityTypeIdentifierBodyMass,154,lb,2026-11-19T07:00:00.250Z,2026-11-19T07:00:00.250Z\n\"heartRate\",abc,count/min,2026-11-19T08:00:00Z,2026-11-19T08:00:00Z"
        var reader = SampleCSVReader()
        var samples: [Sample.Raw] = []
        for byte in Array(text.utf8) { samples += try reader.feed([byte]) }
        samples += try reader.finish()
        #expect(samples.map(\.type) == ["stepCount", "bodyMass", "heartRate"])
        #expect(abs(try Sample.validate(samples[1], now: .distantFuture).value - 69.853) < 0.001)
        #expect(samples[2].unreadable == ["value"])
        #expect(samples[0].sourceID?.hasPrefix("csv:") == true)
        var headless = SampleCSVReader()
        #expect(throws: SampleCSVReader.Problem.header) { _ = try headless.feed(Array("stepCount,1,count,a,b\n".utf8)) }
    }

    @Test(
        "studies together: a type any study asks for, its window the widest, none when one study keeps samples any time"
    )
    func collection() {
        let one = SampleSettings(
            requests: [.init(type: .heartRate, purpose: "A"), .init(type: .stepCount, purpose: "B")], windowDays: 7)
        let two = SampleSettings(requests: [.init(type: .heartRate, purpose: "C")], windowDays: 14)
        let open = SampleSettings(requests: [.init(type: .stepCount, purpose: "B")], windowDays: nil)
        let union = SampleCollection.union([one, two, open])
        #expect(union.types == [.heartRate, .stepCount])
        #expect(union.asked[.heartRate] == .init(purposes: ["A", "C"], windowDays: 14))
        #expect(union.asked[.stepCount] == .init(purposes: ["B"], windowDays: nil))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let moods = SampleCollection.MoodSpan(first: now.addingTimeInterval(-86_400), last: now)
        func sample(_ type: SampleType, daysAgo: Double) -> Sample {
            Sample(
                type: type, value: 1, start: now.addingTimeInterval(-daysAgo * 86_400),
                end: now.addingTimeInterval(-daysAgo * 86_400 + 60), sourceID: "x")
        }
        #expect(union.refusal(of: sample(.heartRate, daysAgo: 10), enabled: [.heartRate], moods: moods) == nil)
        #expect(
            union.refusal(of: sample(.heartRate, daysAgo: 16), enabled: [.heartRate], moods: moods)?.code
                == .outsideWindow)
        #expect(union.refusal(of: sample(.stepCount, daysAgo: 300), enabled: [.stepCount], moods: nil) == nil)
        #expect(union.refusal(of: sample(.stepCount, daysAgo: 1), enabled: [], moods: moods)?.code == .notAllowed)
        #expect(
            union.refusal(of: sample(.bodyMass, daysAgo: 1), enabled: [.bodyMass], moods: moods)?.code == .notAllowed)
    }

    @Test("one person's reasons from several studies, language by language; a stored plain reason still reads")
    func reasonsInLanguages() throws {
        let german = SampleSettings(requests: [.init(type: .heartRate, purpose: LocalizedText(en: "A", de: "A-de"))])
        let english = SampleSettings(requests: [.init(type: .heartRate, purpose: "B")])
        let together = RecordSettings.union([RecordSettings(samples: german), RecordSettings(samples: english)])
        #expect(together.samples.requests.first?.purpose == LocalizedText(en: "A\n\nB", de: "A-de\n\nB"))
        let stored = try JSONDecoder().decode(
            SampleSettings.self, from: Data(#"{"requests":[{"type":"stepCount","purpose":"Why"}]}"#.utf8))
        #expect(stored.requests.first?.purpose == LocalizedText([.en: "Why"]))
    }

    @Test("a mood's valence lies between 0 and 1 and its moment is not in the future")
    func mood() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(
            try Mood.validate(valence: 0, recordedAt: now, note: "  ", now: now)
                == Mood(valence: 0, recordedAt: now, note: nil))
        let refused = #expect(throws: ValidationFailure.self) {
            try Mood.validate(
                valence: 1.2, recordedAt: now.addingTimeInterval(3600), note: String(repeating: "a", count: 2001),
                now: now)
        }
        #expect(refused?.errors.map(\.field) == ["valence", "recordedAt", "note"])
    }
}
