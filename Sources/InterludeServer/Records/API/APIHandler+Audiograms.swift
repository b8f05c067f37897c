import Foundation
import InterludeCore
import OpenAPIRuntime

// MARK: - Audiograms

extension APIHandler {
    func listMyAudiograms(_ input: Operations.ListMyAudiograms.Input) async throws -> Operations.ListMyAudiograms.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.records.list(Audiogram.self, of: patient.requireID()), request)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.Audiogram.init))))
    }

    func createMyAudiogram(_ input: Operations.CreateMyAudiogram.Input) async throws
        -> Operations.CreateMyAudiogram.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let audiogram = try Audiogram.validate(body, rules: try await context.records.rules(for: patient))
        let (stored, created) = try await context.createRecord(audiogram, id: body.id, by: patient)
        let shown = try Components.Schemas.Audiogram(stored)
        return created ? .created(.init(body: .json(shown))) : .ok(.init(body: .json(shown)))
    }

    func updateMyAudiogram(_ input: Operations.UpdateMyAudiogram.Input) async throws
        -> Operations.UpdateMyAudiogram.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let audiogram = try Audiogram.validate(
            .init(id: input.path.recordId, measuredAt: body.measuredAt, points: body.points),
            rules: try await context.records.rules(for: patient))
        let stored = try await context.updateRecord(
            audiogram, id: input.path.recordId, baseVersion: body.baseVersion, by: patient)
        return .ok(.init(body: .json(try .init(stored))))
    }

    func deleteMyAudiogram(_ input: Operations.DeleteMyAudiogram.Input) async throws
        -> Operations.DeleteMyAudiogram.Output
    {
        try await APIContext.current().deleteRecord(
            .audiogram, id: input.path.recordId, baseVersion: input.query.baseVersion)
        return .noContent
    }

    func getMyAudiogramChart(_ input: Operations.GetMyAudiogramChart.Input) async throws
        -> Operations.GetMyAudiogramChart.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let patientID = try patient.requireID()
        guard
            let stored = try await context.records.record(
                try pathID(input.path.recordId), Audiogram.self, of: patientID)
        else {
            throw AppError.notFound
        }
        var earlier: Audiogram?
        if let compare = input.query.compare {
            guard let id = UUID(uuidString: compare) else { throw AppError.field("compare", .invalidFormat) }
            guard let other = try await context.records.record(id, Audiogram.self, of: patientID) else {
                throw AppError.field("compare", .unknown)
            }
            earlier = other.content
        }
        let language = context.request.language
        let chart = AudiogramChart(
            audiogram: stored.content, earlier: earlier,
            ears: AudiogramChart.Ears(rawValue: input.query.ears?.rawValue ?? "both") ?? .both,
            localizer: context.services.localizer, language: language,
            display: DateDisplay(language: language, timeZone: patient.zone), id: "audiogram",
            width: try ChartWidth.checked(input.query.width))
        return .ok(.init(body: .imageSvgXml(HTTPBody(chart.svg))))
    }

    func listPatientAudiograms(_ input: Operations.ListPatientAudiograms.Input) async throws
        -> Operations.ListPatientAudiograms.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.chart(of: input.path.patientId).records(Audiogram.self), request)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.Audiogram.init))))
    }

    /// One audiogram to its patient or their therapist, as Interlude JSON or a FHIR Observation.
    func getAudiogram(_ input: Operations.GetAudiogram.Input) async throws -> Operations.GetAudiogram.Output {
        let context = try APIContext.current()
        let user = try await context.authenticated().user
        let id = try pathID(input.path.recordId)
        let stored: RecordService.Stored<Audiogram>
        switch user.role {
        case .patient:
            guard let own = try await context.records.record(id, Audiogram.self, of: try user.requireID()) else {
                throw AppError.notFound
            }
            stored = own
        case .therapist:
            stored = try await PatientChart.open(
                record: id, for: user, database: context.database, services: context.services
            )
            .record(id, Audiogram.self)
        default:
            throw AppError.notFound
        }
        let body: Data
        if input.query.format == .fhir {
            let subject = try await context.records.fhirSubject(of: stored.record.$patient.id)
            body = try JSONEncoder().encode(stored.content.fhirObservation(id: id, subject: subject))
        } else {
            body = try APIJSON.encoder.encode(try Components.Schemas.Audiogram(stored))
        }
        return .ok(.init(body: .json(try JSONDecoder().decode(OpenAPIObjectContainer.self, from: body))))
    }
}

extension Audiogram.RawPoint {
    init(_ point: Components.Schemas.AudiogramPointInput) {
        self.init(
            ear: point.ear, frequencyHz: point.frequencyHz, thresholdDbHL: point.thresholdDbHL,
            conduction: point.conduction,
            masked: point.masked)
    }
}

extension Components.Schemas.Audiogram {
    init(_ stored: RecordService.Stored<Audiogram>) throws {
        let record = stored.record
        let audiogram = stored.content
        self.init(
            id: try record.requireID().lowercasedText, version: record.version, measuredAt: audiogram.measuredAt,
            points: audiogram.points.map { point in
                .init(
                    ear: .init(rawValue: point.ear.rawValue) ?? .right, frequencyHz: point.frequencyHz,
                    thresholdDbHL: point.thresholdDbHL, conduction: .init(rawValue: point.conduction.rawValue) ?? .air,
                    masked: point.masked)
            },
            rightAverage: audiogram.pureToneAverage(.right), leftAverage: audiogram.pureToneAverage(.left),
            createdAt: record.createdAt, updatedAt: record.updatedAt)
    }
}
