import Fluent
import Foundation
import InterludeCore

extension DemoSetup {
    /// Patients each clinic admits to the trial in the month of history, one every few days.
    static let trialAdmissions = 5

    /// Seed 000's clinic comparison as it stands after a month: a researcher's trial of two arms, `app` (the Daily
    /// three times a day) and `control` (questionnaires only), both answering the PHQ-9 every week; two clinics whose
    /// therapists are on its team admit their patients in cycles of four weeks, each clinic's cycles alternating
    /// between the arms from a drawn first one; 20 participants needed per arm. The history is written by a clock of
    /// its own stepping through the month; a cycle ends halfway through it.
    func createIntersessionTrial(suffix: String) async throws -> [Account] {
        let end = now
        let clock = DemoClock(end.addingTimeInterval(-Double(DemoInstallation.days) * 86_400))
        let past = DemoSetup(database: database, services: services.on(clock.wallClock), logger: logger)
        return try await past.recordTrial(suffix: suffix, clock: clock, until: end)
    }

    private func recordTrial(suffix: String, clock: DemoClock, until end: Date) async throws -> [Account] {
        let (researcher, researcherAccount) = try await staff(
            .researcher, email: "demo-researcher-\(suffix)@example.org", name: "Demo Trial Lead")
        var clinics: [(therapist: UserRecord, account: Account)] = []
        for name in ["north", "south"] {
            clinics.append(
                try await staff(
                    .therapist, email: "demo-therapist-\(name)-\(suffix)@example.org",
                    name: "Dr. Demo \(name.capitalized)"))
        }
        let studyID = try await trialStudy(by: researcher, team: clinics.map(\.account.email))
        let studies = StudyService(database: database, services: services)
        var patients: [(UserRecord, Account)] = []
        var admissions: [DemoHistory.Event] = []
        for number in 0..<Self.trialAdmissions {
            for (index, clinic) in clinics.enumerated() {
                let (patient, account) = try await pairedPatient(
                    email: "demo-patient-\(index == 0 ? "north" : "south")-\(number + 1)-\(suffix)@example.org",
                    name: "Demo Patient", therapist: clinic.therapist)
                patients.append((patient, account))
                // One admission every five or six days in each clinic, the clinics a day apart.
                let day = Double(number * DemoInstallation.days / Self.trialAdmissions + index)
                admissions.append(
                    DemoHistory.Event(at: clock.now.addingTimeInterval(day * 86_400 + 10 * 3600)) {
                        _ = try await studies.join(
                            patient: patient, studyID: studyID, consentVersion: "1", password: nil)
                    })
            }
        }
        let history = DemoHistory(database: database, services: services, clock: clock)
        try await history.run(
            until: end,
            people: patients.map {
                DemoHistory.Person(
                    user: $0.0, answerRate: { _ in 0.8 },
                    settled: { key, _ in key == "phq-9" ? ["phq9_9": .text("0")] : [:] })
            },
            events: admissions, seed: 2000)
        return [researcherAccount] + clinics.map(\.account) + [patients[0].1]
    }

    /// The trial, running, its design saved on the history's first day with the first cycle begun two weeks before.
    private func trialStudy(by researcher: UserRecord, team: [String]) async throws -> UUID {
        let today = LocalDate(now, in: TimeZone(identifier: Self.timeZone)!)
        let draft = try StudyDraft.validate(
            title: [.en: "Intersession trial", .de: "Intersession-Studie"],
            description: [
                .en: "Does the app between sessions help? Two clinics compare therapy with and without it.",
                .de: "Hilft die App zwischen den Sitzungen? Zwei Kliniken vergleichen Therapie mit und ohne sie.",
            ],
            consentText: [
                .en:
                    "I take part voluntarily and may leave at any time. My clinic's admission decides whether I use the app; my answers are stored under a pseudonym.",
                .de:
                    "Ich nehme freiwillig teil und kann jederzeit aufhören. Meine Aufnahme in der Klinik entscheidet, ob ich die App nutze; meine Antworten werden unter einem Pseudonym gespeichert.",
            ],
            consentVersion: "1", joinMode: JoinMode.open.rawValue, joinPassword: nil,
            status: StudyStatus.running.rawValue, arms: ["app", "control"],
            allocation: ArmAllocation.sequentialCycles.rawValue,
            allocationSettings: AllocationSettings(
                targets: [20, 20], control: [false, true], cycleDays: 28, cycleStart: today.adding(days: -14),
                drawnStart: true))
        let study = try await StudyService(database: database, services: services).create(by: researcher, draft: draft)
        let studyID = try study.requireID()
        let access = StudyAccess(database: database, services: services)
        let members = StudyTeamService(database: database, services: services)
        let owner = try await access.require(.manageTeam, in: studyID, by: researcher)
        for email in team { _ = try await members.add(email: email, role: .therapist, in: owner) }
        let plans = try await access.require(.editPlans, in: studyID, by: researcher)
        let schedules = ScheduleService(database: database, services: services)
        let daily = SchedulePlan.intersessionDaily(
            reminderMinutes: [15],
            notification: LocalizedText([.en: "How are you right now?", .de: "Wie geht es Ihnen gerade?"]))
        _ = try await schedules.create(daily, in: plans, patientID: nil, arm: "app")
        let outcome = SchedulePlan(
            instrumentKey: "phq-9", pattern: .weekly(weekday: .monday, time: LocalTime("18:00")!),
            durationMinutes: 48 * 60, reminderMinutes: [24 * 60])
        _ = try await schedules.create(outcome, in: plans, patientID: nil, arm: nil)
        return studyID
    }
}
