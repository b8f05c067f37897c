import Foundation
import InterludeCore

extension APIHandler {
    func listMyMessagePlans(_ input: Operations.ListMyMessagePlans.Input) async throws
        -> Operations.ListMyMessagePlans.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let offers = try await context.messageChoices.offers(for: patient.requireID())
        let page = ListPage(
            of: offers, request, key: { SortKey.words($0.study.title) }, id: { $0.study.id! }, descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map { try .init($0, language: patient.language) })))
    }

    func chooseMyMessagePlan(_ input: Operations.ChooseMyMessagePlan.Input) async throws
        -> Operations.ChooseMyMessagePlan.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try checkLimits([(body.windowStart, "windowStart", 5), (body.windowEnd, "windowEnd", 5)])
        let patient = try await context.user(.patient)
        let offer = try await context.messageChoices.choose(
            perDay: body.perDay, windowStart: body.windowStart, windowEnd: body.windowEnd,
            in: try pathID(input.path.studyId),
            by: patient.requireID())
        return .ok(.init(body: .json(try .init(offer, language: patient.language))))
    }

    func resetMyMessagePlan(_ input: Operations.ResetMyMessagePlan.Input) async throws
        -> Operations.ResetMyMessagePlan.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try await context.messageChoices.reset(in: try pathID(input.path.studyId), by: patient.requireID())
        return .noContent
    }
}

extension APIContext {
    var messageChoices: MessageChoiceService { MessageChoiceService(database: database, services: services) }
}

extension Components.Schemas.MessagePlanOffer {
    init(_ offer: MessageChoiceService.Offer, language: Language) throws {
        self.init(
            studyId: try offer.study.requireID().lowercasedText, studyTitle: offer.study.titles.text(language),
            studyKind: StudyKind(joinMode: offer.study.joinMode) == .practice ? .practice : .research,
            perDay: offer.plan.perDay,
            windowStart: offer.plan.windowStart.description, windowEnd: offer.plan.windowEnd.description,
            personChooses: offer.plan.personChooses,
            choice: offer.plan.personChooses
                ? offer.choice.map {
                    .init(
                        perDay: $0.perDay, windowStart: $0.windowStart.description, windowEnd: $0.windowEnd.description)
                } : nil)
    }
}
