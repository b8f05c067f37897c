import Foundation
import InterludeCore

// MARK: - Therapies

extension APIHandler {
    func listMyTherapies(_ input: Operations.ListMyTherapies.Input) async throws -> Operations.ListMyTherapies.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let therapies = try await context.records.list(Therapy.self, of: patient.requireID())
        let page = try Self.page(therapies, request, for: patient, now: context.services.clock.now)
        return .ok(.init(headers: .init(nextCursor: page.next), body: .json(page.items)))
    }

    func createMyTherapy(_ input: Operations.CreateMyTherapy.Input) async throws -> Operations.CreateMyTherapy.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let therapy = try Therapy.validate(body, rules: try await context.records.rules(for: patient))
        let (stored, created) = try await context.createRecord(therapy, id: body.id, by: patient)
        let shown = try Components.Schemas.Therapy(
            stored, today: LocalDate(context.services.clock.now, in: patient.zone))
        return created ? .created(.init(body: .json(shown))) : .ok(.init(body: .json(shown)))
    }

    func updateMyTherapy(_ input: Operations.UpdateMyTherapy.Input) async throws -> Operations.UpdateMyTherapy.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let therapy = try Therapy.validate(
            .init(
                id: input.path.recordId, name: body.name, _type: body._type, startDate: body.startDate,
                endDate: body.endDate, note: body.note),
            rules: try await context.records.rules(for: patient))
        let stored = try await context.updateRecord(
            therapy, id: input.path.recordId, baseVersion: body.baseVersion, by: patient)
        return .ok(
            .init(body: .json(try .init(stored, today: LocalDate(context.services.clock.now, in: patient.zone)))))
    }

    func deleteMyTherapy(_ input: Operations.DeleteMyTherapy.Input) async throws -> Operations.DeleteMyTherapy.Output {
        try await APIContext.current().deleteRecord(
            .therapy, id: input.path.recordId, baseVersion: input.query.baseVersion)
        return .noContent
    }

    func listPatientTherapies(_ input: Operations.ListPatientTherapies.Input) async throws
        -> Operations.ListPatientTherapies.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let chart = try await context.chart(of: input.path.patientId)
        let page = try Self.page(
            try await chart.records(Therapy.self), request, for: chart.patient, now: context.services.clock.now)
        return .ok(.init(headers: .init(nextCursor: page.next), body: .json(page.items)))
    }

    /// A page of therapies, ongoing ones first, then by type and newest start, as of today in the patient's zone.
    private static func page(
        _ therapies: [RecordService.Stored<Therapy>], _ request: PageRequest, for patient: UserRecord, now: Date
    )
        throws -> ListPage<Components.Schemas.Therapy>
    {
        let today = LocalDate(now, in: patient.zone)
        return try ListPage(
            of: therapies, request, key: { Therapy.sortKey($0.content, on: today) }, id: \.listedID, descending: false
        )
        .map { try Components.Schemas.Therapy($0, today: today) }
    }
}

extension Components.Schemas.Therapy {
    init(_ stored: RecordService.Stored<Therapy>, today: LocalDate) throws {
        let record = stored.record
        let therapy = stored.content
        self.init(
            id: try record.requireID().lowercasedText, version: record.version, name: therapy.name,
            _type: .init(rawValue: therapy.kind.rawValue) ?? .other, startDate: therapy.startDate.description,
            endDate: therapy.endDate?.description, note: therapy.note, ongoing: therapy.isOngoing(on: today),
            createdAt: record.createdAt, updatedAt: record.updatedAt)
    }
}
