import Foundation
import InterludeCore

// MARK: - Health events

extension APIHandler {
    func listMyEvents(_ input: Operations.ListMyEvents.Input) async throws -> Operations.ListMyEvents.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try checkLimits([(input.query.q, "q", 200), (input.query._type, "type", HealthEvent.typeMaxLength)])
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let events = try await context.records.list(HealthEvent.self, of: patient.requireID())
            .filter { stored in input.query._type.map { stored.content.type == $0 } ?? true }
            .filter { stored in input.query.q.map { stored.content.matches($0) } ?? true }
        let page = ListPage(of: events, request)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.HealthEvent.init))))
    }

    func createMyEvent(_ input: Operations.CreateMyEvent.Input) async throws -> Operations.CreateMyEvent.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let event = try HealthEvent.validate(body, rules: try await context.records.rules(for: patient))
        let (stored, created) = try await context.createRecord(event, id: body.id, by: patient)
        let shown = try Components.Schemas.HealthEvent(stored)
        return created ? .created(.init(body: .json(shown))) : .ok(.init(body: .json(shown)))
    }

    func updateMyEvent(_ input: Operations.UpdateMyEvent.Input) async throws -> Operations.UpdateMyEvent.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let event = try HealthEvent.validate(
            .init(
                id: input.path.recordId, title: body.title, occurredAt: body.occurredAt, _type: body._type,
                description: body.description),
            rules: try await context.records.rules(for: patient))
        let stored = try await context.updateRecord(
            event, id: input.path.recordId, baseVersion: body.baseVersion, by: patient)
        return .ok(.init(body: .json(try .init(stored))))
    }

    func deleteMyEvent(_ input: Operations.DeleteMyEvent.Input) async throws -> Operations.DeleteMyEvent.Output {
        try await APIContext.current().deleteRecord(
            .event, id: input.path.recordId, baseVersion: input.query.baseVersion)
        return .noContent
    }

    func listPatientEvents(_ input: Operations.ListPatientEvents.Input) async throws
        -> Operations.ListPatientEvents.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.chart(of: input.path.patientId).records(HealthEvent.self), request)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.HealthEvent.init))))
    }
}

extension Components.Schemas.HealthEvent {
    init(_ stored: RecordService.Stored<HealthEvent>) throws {
        let record = stored.record
        self.init(
            id: try record.requireID().lowercasedText, version: record.version, title: stored.content.title,
            occurredAt: stored.content.occurredAt, _type: stored.content.type, description: stored.content.description,
            createdAt: record.createdAt, updatedAt: record.updatedAt)
    }
}
