import Foundation
import InterludeCore

extension APIHandler {
    func getMyToday(_ input: Operations.GetMyToday.Input) async throws -> Operations.GetMyToday.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let today = try await TodayService(database: context.database, services: context.services).today(of: patient)
        let prompts = try await context.promptBodies(
            today.due + Array(today.next.map { [$0] } ?? []), blocked: today.blocked)
        return .ok(
            .init(
                body: .json(
                    .init(
                        me: try await .load(patient, on: context.database),
                        situation: .init(today.situation),
                        due: Array(prompts.prefix(today.due.count)),
                        dueCount: today.dueCount > today.due.count ? today.dueCount : nil,
                        next: today.next == nil ? nil : prompts.last,
                        appointment: today.appointment.map(Components.Schemas.Appointment.init),
                        messages: today.messages.map(Components.Schemas.MessagePreview.init),
                        unseenMessages: today.unseenMessages,
                        week: today.week.days.map {
                            .init(date: $0.date.description, planned: $0.planned, answered: $0.answered)
                        }))))
    }
}

extension Components.Schemas.Today.SituationPayload {
    init(_ situation: PatientSituation) {
        switch situation {
        case .client: self = .client
        case .participant: self = .participant
        case .both: self = .both
        case .neither: self = .neither
        }
    }
}

extension Components.Schemas.MessagePreview {
    init(_ opened: InterventionService.Opened) {
        self.init(
            id: opened.id.lowercasedText, kind: .init(rawValue: opened.kind.rawValue) ?? .message,
            firstLine: opened.text.firstLine(shortenedTo: TodayService.firstLineLength), sentAt: opened.deliverAt)
    }
}
