import Foundation
import InterludeCore

// MARK: - Moods

extension APIHandler {
    func listMyMoods(_ input: Operations.ListMyMoods.Input) async throws -> Operations.ListMyMoods.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.records.list(Mood.self, of: patient.requireID()), request)
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try page.items.map(Components.Schemas.Mood.init))))
    }

    func createMyMood(_ input: Operations.CreateMyMood.Input) async throws -> Operations.CreateMyMood.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let mood = try Mood.validate(body, rules: try await context.records.rules(for: patient))
        let (stored, created) = try await context.createRecord(mood, id: body.id, by: patient)
        let shown = try Components.Schemas.Mood(stored)
        return created ? .created(.init(body: .json(shown))) : .ok(.init(body: .json(shown)))
    }

    func updateMyMood(_ input: Operations.UpdateMyMood.Input) async throws -> Operations.UpdateMyMood.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let mood = try Mood.validate(
            .init(id: input.path.recordId, valence: body.valence, recordedAt: body.recordedAt, note: body.note),
            rules: try await context.records.rules(for: patient))
        let stored = try await context.updateRecord(
            mood, id: input.path.recordId, baseVersion: body.baseVersion, by: patient)
        return .ok(.init(body: .json(try .init(stored))))
    }

    func deleteMyMood(_ input: Operations.DeleteMyMood.Input) async throws -> Operations.DeleteMyMood.Output {
        try await APIContext.current().deleteRecord(
            .mood, id: input.path.recordId, baseVersion: input.query.baseVersion)
        return .noContent
    }

    func listPatientMoods(_ input: Operations.ListPatientMoods.Input) async throws -> Operations.ListPatientMoods.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.chart(of: input.path.patientId).records(Mood.self), request)
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try page.items.map(Components.Schemas.Mood.init))))
    }
}

extension Components.Schemas.Mood {
    init(_ stored: RecordService.Stored<Mood>) throws {
        let record = stored.record
        self.init(
            id: try record.requireID().lowercasedText, version: record.version, valence: stored.content.valence,
            recordedAt: stored.content.recordedAt, note: stored.content.note, createdAt: record.createdAt,
            updatedAt: record.updatedAt)
    }
}
