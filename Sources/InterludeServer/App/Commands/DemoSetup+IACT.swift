import Foundation
import InterludeCore

extension DemoSetup {
    /// Seed 004: the therapist's practice keeps difficult thoughts and sends three reinforcement messages a day from
    /// a starter set of ACT messages, fewer or later if the client chooses. `recordIACTWeeks` gives a client their
    /// history.
    func planIACT(therapist: UserRecord) async throws {
        let practiceID = try await PairingService(database: database, services: services).practice(
            of: therapist.requireID()
        ).requireID()
        let access = StudyAccess(database: database, services: services)
        _ = try await StudyService(database: database, services: services).setRecordSettings(
            try RecordSettings.validate(collects: [RecordKind.thought.rawValue], eventTypes: []),
            in: try await access.require(.configureRecords, in: practiceID, by: therapist))
        let library = InterventionLibrary(database: database, services: services)
        let practice = try await access.require(.editLibrary, in: practiceID, by: therapist)
        for number in 1...Self.iactMessageCount {
            let key = "demo.iact.message.\(number)"
            try await library.addMessage(
                Dictionary(uniqueKeysWithValues: Language.allCases.map { ($0, services.localizer.text(key, $0)) }),
                in: practice)
        }
        try await library.setPlan(
            MessagePlan(
                perDay: 3, windowStart: LocalTime("09:00")!, windowEnd: LocalTime("20:00")!, personChooses: true),
            in: practice)
    }

    static let iactMessageCount = 8

    /// The client's own thoughts, each with how often it came back over the four weeks.
    static let iactThoughts: [(text: String, times: Int)] = [
        ("I am not good enough.", 7),
        ("Nobody really wants me around.", 5),
        ("I will mess up the presentation.", 4),
        ("If I feel anxious, something bad will happen.", 3),
        ("I should be further along by now.", 2),
    ]

    /// Four weeks of occurrences, the same every time (a fixed seed): ratings before the exercise negative, after it
    /// a little less so, both easing week by week; every third one with the place the client was. Then two example
    /// thoughts the therapist adds, one of which the client has recorded since.
    func recordIACTWeeks(of patient: UserRecord, therapist: UserRecord) async throws {
        let thoughts = ThoughtService(database: database, services: services)
        let zone = patient.zone
        let today = LocalDate(now, in: zone)
        var random = SeededRandom(seed: 4)
        var count = 0
        for (index, thought) in Self.iactThoughts.enumerated() {
            for time in 0..<thought.times {
                let daysAgo = 27 - (time * 27 / max(thought.times - 1, 1)) + index % 2
                let progress = Double(27 - daysAgo) / 27
                let before = min(max(-0.85 + 0.35 * progress + random.next(in: -0.1...0.1), -1), 1)
                let after = min(max(before + 0.2 + 0.15 * progress + random.next(in: -0.05...0.1), -1), 1)
                let at = LocalDateTime(
                    date: today.adding(days: -daysAgo), time: LocalTime(minutes: 8 * 60 + (count * 97) % 720)!
                ).instant(in: zone)
                let fields = try ThoughtOccurrence.validate(
                    recordedAt: min(at, now.addingTimeInterval(-600)), ratingBefore: (before * 100).rounded() / 100,
                    ratingAfter: (after * 100).rounded() / 100,
                    location: count % 3 == 0
                        ? .init(latitude: 48.2082 + Double(count) * 0.001, longitude: 16.3738, accuracy: 25) : nil,
                    note: time == 0 && index == 2 ? "Before the team meeting." : nil, now: now)
                _ = try await thoughts.record(thought.text, fields, id: UUID(), thoughtID: nil, by: patient)
                count += 1
            }
        }
        let chart = try await PatientChart.open(
            patient.requireID(), for: therapist, database: database, services: services)
        for number in 1...2 {
            _ = try await chart.addThought(
                services.localizer.text("demo.iact.example.\(number)", therapist.language), id: nil)
        }
        let recorded = try ThoughtOccurrence.validate(
            recordedAt: now.addingTimeInterval(-3_600), ratingBefore: -0.5, ratingAfter: -0.1, location: nil, note: nil,
            now: now)
        _ = try await thoughts.record(
            services.localizer.text("demo.iact.example.1", therapist.language), recorded, id: UUID(), thoughtID: nil,
            by: patient)
    }
}
