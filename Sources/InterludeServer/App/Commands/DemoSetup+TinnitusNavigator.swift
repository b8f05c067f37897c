import Foundation
import InterludeCore

extension DemoSetup {
    /// Seed 002: a study collecting events, therapies and audiograms with its own "Hearing test" event type; the
    /// case history once, the worst symptom weekly and the Mini-TQ monthly, joined by `patient`.
    func planTinnitusNavigator(researcher: UserRecord, patient: UserRecord) async throws {
        let draft = try StudyDraft.validate(
            title: [.en: "TinnitusNavigator", .de: "TinnitusNavigator"],
            description: [
                .en: "Your tinnitus record: events, therapies and hearing tests, for your doctor.",
                .de: "Ihr Tinnitus-Tagebuch: Ereignisse, Therapien und Hörtests, für Ihre Ärztin oder Ihren Arzt.",
            ],
            consentText: [
                .en: "I take part voluntarily and may leave at any time. My records are stored under a pseudonym.",
                .de:
                    "Ich nehme freiwillig teil und kann jederzeit aufhören. Meine Einträge werden unter einem Pseudonym gespeichert.",
            ],
            consentVersion: "1", joinMode: JoinMode.open.rawValue, joinPassword: nil,
            status: StudyStatus.running.rawValue)
        let studies = StudyService(database: database, services: services)
        let study = try await studies.create(by: researcher, draft: draft)
        let studyID = try study.requireID()
        let access = StudyAccess(database: database, services: services)
        _ = try await studies.setRecordSettings(
            try RecordSettings.validate(
                collects: [RecordKind.event, .therapy, .audiogram].map(\.rawValue), eventTypes: [Self.hearingTest],
                eventTypeNames: [Self.hearingTest: "Hörtest"]),
            in: try await access.require(.configureRecords, in: studyID, by: researcher))
        let grant = try await access.require(.editPlans, in: studyID, by: researcher)
        let schedules = ScheduleService(database: database, services: services)
        let plans = [
            SchedulePlan(instrumentKey: "tschq", pattern: .once, durationMinutes: 14 * 24 * 60),
            SchedulePlan(
                instrumentKey: "worst-symptom", pattern: .weekly(weekday: .sunday, time: LocalTime("18:00")!),
                durationMinutes: 24 * 60, reminderMinutes: [3 * 60]),
            SchedulePlan(
                instrumentKey: "mini-tq", pattern: .monthly(day: 1, time: LocalTime("18:00")!),
                durationMinutes: 3 * 24 * 60, reminderMinutes: [24 * 60]),
        ]
        for plan in plans {
            _ = try await schedules.create(plan, in: grant, patientID: nil, arm: nil)
        }
        _ = try await studies.join(patient: patient, studyID: studyID, consentVersion: "1", password: nil)
    }

    static let hearingTest = "Hearing test"

    /// Four months of history before now: five events, a finished and an ongoing therapy, and three audiograms
    /// whose 4 kHz dip deepens.
    func recordTinnitusHistory(of patient: UserRecord) async throws {
        let records = RecordService(database: database, services: services)
        let zone = patient.zone
        let today = LocalDate(now, in: zone)
        let at = { (days: Int, time: String) in
            LocalDateTime(date: today.adding(days: -days), time: LocalTime(time)!).instant(in: zone)
        }
        let events: [(Int, String, String, String, String?)] = [
            (
                118, "19:30", "Ringing much louder after a concert", HealthEvent.BuiltInType.tinnitusAttack.rawValue,
                "Left the concert early; the ringing in the right ear did not fade overnight."
            ),
            (
                116, "10:00", "ENT appointment", HealthEvent.BuiltInType.appointment.rawValue,
                "Hearing test, cortisone prescribed."
            ),
            (74, "23:00", "Weeks of poor sleep and low mood", HealthEvent.BuiltInType.mentalIllness.rawValue, nil),
            (
                31, "14:15", "Tinnitus attack at work", HealthEvent.BuiltInType.tinnitusAttack.rawValue,
                "Open-plan office, after a loud meeting."
            ),
            (9, "09:30", "Follow-up hearing test", Self.hearingTest, nil),
        ]
        for (days, time, title, type, description) in events {
            let event = try HealthEvent.validate(
                title: title, occurredAt: at(days, time), type: type, description: description,
                studyTypes: [Self.hearingTest])
            _ = try await records.create(event, id: UUID(), by: patient)
        }
        let therapies = [
            try Therapy.validate(
                name: "Cortisone course", kind: Therapy.Kind.medicalTreatment.rawValue,
                startDate: today.adding(days: -116).description, endDate: today.adding(days: -106).description,
                note: nil),
            try Therapy.validate(
                name: "Tinnitus retraining with sound generator", kind: Therapy.Kind.retrainingTherapy.rawValue,
                startDate: today.adding(days: -90).description, endDate: today.adding(days: 60).description,
                note: "Counselling every two weeks; the sound generator six hours a day."),
        ]
        for therapy in therapies {
            _ = try await records.create(therapy, id: UUID(), by: patient)
        }
        // Right ear, then left; the 4 kHz notch of noise damage deepens from test to test.
        let tests: [(days: Int, right: [Int], left: [Int])] = [
            (116, [10, 10, 15, 15, 20, 35, 25], [5, 10, 10, 15, 15, 30, 20]),
            (60, [10, 15, 15, 15, 25, 45, 30], [5, 10, 10, 15, 20, 35, 25]),
            (9, [15, 15, 15, 20, 25, 55, 35], [10, 10, 15, 15, 20, 45, 25]),
        ]
        for test in tests {
            var points: [Audiogram.RawPoint] = []
            for (ear, levels) in [("right", test.right), ("left", test.left)] {
                for (frequency, level) in zip(Audiogram.standardFrequencies, levels) {
                    points.append(Audiogram.RawPoint(ear: ear, frequencyHz: frequency, thresholdDbHL: level))
                }
            }
            let audiogram = try Audiogram.validate(measuredAt: at(test.days, "10:00"), points: points)
            _ = try await records.create(audiogram, id: UUID(), by: patient)
        }
    }
}
