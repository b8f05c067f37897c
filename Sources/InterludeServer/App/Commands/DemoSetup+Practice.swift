import Foundation
import InterludeCore

extension DemoSetup {
    /// The PHQ-9 each Monday evening for two days, for everyone in the therapist's practice.
    func planPHQ9(therapist: UserRecord) async throws {
        let practiceID = try await PairingService(database: database, services: services).practice(
            of: therapist.requireID()
        ).requireID()
        let practice = try await StudyAccess(database: database, services: services).require(
            .editPlans, in: practiceID, by: therapist)
        let plan = SchedulePlan(
            instrumentKey: "phq-9", pattern: .weekly(weekday: .monday, time: LocalTime("18:00")!),
            durationMinutes: 48 * 60,
            reminderMinutes: [24 * 60])
        _ = try await ScheduleService(database: database, services: services).create(
            plan, in: practice, patientID: nil, arm: nil)
    }

    /// What the therapist sends after sessions, and what the patients do with it: after each of Ada's first four
    /// sessions a task or a word of encouragement, read that evening, a task done the next; after Ben's second a
    /// task he reads two days later and leaves open. `start` is the first day of the history.
    func sessionFollowUps(ada: UserRecord, ben: UserRecord, therapist: UserRecord, from start: Date) async throws
        -> [DemoHistory.Event]
    {
        let practiceID = try await PairingService(database: database, services: services).practice(
            of: therapist.requireID()
        ).requireID()
        let interventions = InterventionService(database: database, services: services)
        let zone = ada.zone
        let firstDay = LocalDate(start, in: zone)
        let at = { (day: Int, time: String) in
            LocalDateTime(date: firstDay.adding(days: day), time: LocalTime(time)!).instant(in: zone)
        }
        let task = InterventionDraft(
            kind: .task, text: "Before our next session, note one moment you thought of therapy and how you felt.")
        let praise = InterventionDraft(kind: .commendation, text: "You kept at it this week. Well done.")
        var events: [DemoHistory.Event] = []
        func followUp(_ patient: UserRecord, day: Int, _ draft: InterventionDraft, seenAfterDays: Int, done: Bool)
            throws
        {
            let id = UUID()
            let patientID = try patient.requireID()
            events.append(
                DemoHistory.Event(at: at(day, "11:15")) {
                    _ = try await interventions.send(draft, to: patientID, in: practiceID, by: therapist, id: id)
                })
            events.append(
                DemoHistory.Event(at: at(day + seenAfterDays, "19:40")) {
                    _ = try await interventions.markSeen(id, by: patient)
                })
            if done {
                events.append(
                    DemoHistory.Event(at: at(day + seenAfterDays + 1, "20:10")) {
                        _ = try await interventions.complete(id, by: patient)
                    })
            }
        }
        for (index, day) in [3, 10, 17, 24].enumerated() {
            let isTask = index % 2 == 0
            try followUp(ada, day: day, isTask ? task : praise, seenAfterDays: 0, done: isTask)
        }
        try followUp(ben, day: 13, task, seenAfterDays: 2, done: false)
        return events
    }
}
