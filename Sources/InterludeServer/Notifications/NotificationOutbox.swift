import Fluent
import Foundation
import InterludeCore

/// Puts notifications into the outbox: for questionnaires that open and their reminders, for appointments an
/// hour before they start, and for whatever else calls `enqueue`. Each has a dedupe key naming the event and
/// its moment, so collecting again, or in another process, adds nothing twice, and a prompt or appointment that
/// moves gets a notification for its new moment.
package struct NotificationOutbox: Sendable {
    let database: any Database
    let localizer: Localizer

    package init(database: any Database, localizer: Localizer) {
        self.database = database
        self.localizer = localizer
    }

    /// Notifications are queued this far ahead of their moment.
    static let lead: TimeInterval = 15 * 60
    /// A moment missed (the server was down) is still worth a notification this long afterwards.
    static let lookBack: TimeInterval = 6 * 3600
    static let appointmentNotice: TimeInterval = 3600

    package struct Item: Sendable {
        let userID: UUID
        let category: NotificationCategory
        let dedupeKey: String
        let title: String
        let body: String
        let path: String
        let dueAt: Date
        let expiresAt: Date
        var promptID: UUID?
        var appointmentID: UUID?

        package init(
            userID: UUID, category: NotificationCategory, dedupeKey: String, title: String, body: String, path: String,
            dueAt: Date, expiresAt: Date, promptID: UUID? = nil, appointmentID: UUID? = nil
        ) {
            self.userID = userID
            self.category = category
            self.dedupeKey = dedupeKey
            self.title = title
            self.body = body
            self.path = path
            self.dueAt = dueAt
            self.expiresAt = expiresAt
            self.promptID = promptID
            self.appointmentID = appointmentID
        }
    }

    /// Queues the notifications whose moment lies between `lookBack` ago and `lead` ahead; returns how many are new.
    func collect(now: Date) async throws -> Int {
        var items: [Item] = []
        // Prompts opened up to a week before the window still get the reminders that fall into it.
        let prompts = try await PromptRecord.query(on: database)
            .filter(\.$opensAt > now.addingTimeInterval(-Self.lookBack - 7 * 86_400))
            .filter(\.$opensAt <= now.addingTimeInterval(Self.lead))
            .filter(\.$closesAt > now)
            .filter(\.$status ~~ [PromptStatus.scheduled, PromptStatus.open])
            .all()
        let appointments = try await AppointmentRecord.query(on: database)
            .filter(\.$startsAt > now)
            .filter(\.$startsAt <= now.addingTimeInterval(Self.appointmentNotice + Self.lead))
            .all()
        // A reminder set after its moment (an end entered less than a week ahead) still goes until the end.
        let reminders = try await EntryRecord.query(on: database)
            .filter(\.$remindAt > now.addingTimeInterval(-Double(Therapy.endReminderDays) * 86_400))
            .filter(\.$remindAt <= now.addingTimeInterval(Self.lead))
            .all()
        let userIDs = Set(
            prompts.map { $0.$patient.id } + appointments.map { $0.$patient.id } + reminders.map { $0.$patient.id })
        guard !userIDs.isEmpty else { return 0 }
        let users = Dictionary(
            uniqueKeysWithValues: try await UserRecord.query(on: database).filter(\.$id ~~ Array(userIDs)).all().map {
                ($0.id!, $0)
            })
        let planIDs = Set(prompts.compactMap(\.planID))
        var planReminders: [UUID: [Int]] = [:]
        for plan in try await PlanRecord.query(on: database).filter(\.$id ~~ Array(planIDs)).all() {
            planReminders[plan.id!] = (try? JSONDecoder().decode(SchedulePlan.self, from: Data(plan.definition.utf8)))?
                .reminderMinutes.sorted()
        }
        let window = now.addingTimeInterval(-Self.lookBack)...now.addingTimeInterval(Self.lead)
        for prompt in prompts {
            guard let user = users[prompt.$patient.id], let promptID = prompt.id else { continue }
            let language = user.language
            // From the moment it opens: "until 20:00" the same day, "until Friday 03:29" later in the week.
            let closes = DateDisplay(language: language, timeZone: user.zone).deadline(
                prompt.closesAt, from: prompt.opensAt)
            let body = localizer.text("notification.questionnaire.body", language, ["time": closes])
            let opens = Int(prompt.opensAt.timeIntervalSince1970)
            let path = "/app/questionnaires/\(promptID.lowercasedText)"
            if window.contains(prompt.opensAt) {
                items.append(
                    Item(
                        userID: user.id!, category: .questionnaires, dedupeKey: "prompt:\(promptID):open:\(opens)",
                        title: localizer.text("notification.questionnaire.title", language), body: body, path: path,
                        dueAt: prompt.opensAt, expiresAt: prompt.closesAt, promptID: promptID))
            }
            let reminders = prompt.planID.flatMap { planReminders[$0] } ?? []
            for minutes in SchedulePlan.dueReminders(
                reminders, opens: prompt.opensAt, closes: prompt.closesAt, in: window)
            {
                let due = prompt.opensAt.addingTimeInterval(TimeInterval(minutes) * 60)
                items.append(
                    Item(
                        userID: user.id!, category: .questionnaires,
                        dedupeKey: "prompt:\(promptID):reminder:\(minutes):\(opens)",
                        title: localizer.text("notification.reminder.title", language), body: body, path: path,
                        dueAt: due, expiresAt: prompt.closesAt, promptID: promptID))
            }
        }
        for appointment in appointments {
            guard let user = users[appointment.$patient.id], let appointmentID = appointment.id else { continue }
            let due = appointment.startsAt.addingTimeInterval(-Self.appointmentNotice)
            let starts = LocalDateTime(appointment.startsAt, in: user.zone).time.description
            items.append(
                Item(
                    userID: user.id!, category: .appointments,
                    dedupeKey: "appointment:\(appointmentID):\(Int(appointment.startsAt.timeIntervalSince1970))",
                    title: localizer.text("notification.appointment.title", user.language),
                    body: localizer.text("notification.appointment.body", user.language, ["time": starts]),
                    path: "/app/appointments", dueAt: max(due, now), expiresAt: appointment.startsAt,
                    appointmentID: appointmentID))
        }
        for record in reminders {
            guard let user = users[record.$patient.id], let recordID = record.id, let due = record.remindAt else {
                continue
            }
            // The key names the moment, so a therapy whose end moves is announced again for its new end, and one
            // edited otherwise is not announced twice.
            items.append(
                Item(
                    userID: user.id!, category: .messages,
                    dedupeKey: "record:\(recordID):reminder:\(Int(due.timeIntervalSince1970 / 86_400))",
                    title: localizer.text("notification.\(record.kind.rawValue)Reminder.title", user.language),
                    body: localizer.text("notification.\(record.kind.rawValue)Reminder.body", user.language),
                    path: "/app/\(record.kind.collection)", dueAt: max(due, now),
                    expiresAt: due.addingTimeInterval(Double(Therapy.endReminderDays) * 86_400)))
        }
        return try await enqueue(items, now: now)
    }

    /// Adds the items whose dedupe key is new; returns how many were added.
    @discardableResult
    package func enqueue(_ items: [Item], now: Date) async throws -> Int {
        var added = 0
        for batch in items.batches() {
            let known = Set(
                try await NotificationRecord.query(on: database).filter(\.$dedupeKey ~~ batch.map(\.dedupeKey))
                    .all().map(\.dedupeKey))
            let fresh = batch.filter { !known.contains($0.dedupeKey) }
            guard !fresh.isEmpty else { continue }
            added += try await Statements.insertNotifications(fresh, at: now, on: database)
        }
        return added
    }
}
