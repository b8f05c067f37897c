import Foundation
import InterludeCore

extension APIHandler {
    func getRecordSettings(_ input: Operations.GetRecordSettings.Input) async throws
        -> Operations.GetRecordSettings.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.viewStudy, in: try pathID(input.path.studyId), by: user)
        return .ok(.init(body: .json(.init(try context.studies.recordSettings(in: grant)))))
    }

    func updateRecordSettings(_ input: Operations.UpdateRecordSettings.Input) async throws
        -> Operations.UpdateRecordSettings.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.configureRecords, in: try pathID(input.path.studyId), by: user)
        let settings = try RecordSettings.validate(
            collects: body.collects, eventTypes: body.eventTypes,
            eventTypeNames: body.eventTypeNames?.additionalProperties ?? [:],
            sampleTypes: (body.sampleTypes ?? []).map { ($0._type, LanguageTexts.merged($0.purpose, $0.purposes)) },
            windowDays: body.windowDays)
        return .ok(.init(body: .json(.init(try await context.studies.setRecordSettings(settings, in: grant)))))
    }
}

extension Components.Schemas.RecordSettings {
    init(_ settings: RecordSettings) {
        self.init(
            collects: settings.orderedKinds.map(Components.Schemas.RecordKind.init), eventTypes: settings.eventTypes,
            eventTypeNames: settings.eventTypeNames.isEmpty
                ? nil : .init(additionalProperties: settings.eventTypeNames.mapValues(LanguageTexts.init)),
            sampleTypes: settings.samples.requests.isEmpty
                ? nil
                : settings.samples.requests.map {
                    .init(_type: $0.type.rawValue, purpose: $0.purpose.text(.fallback), purposes: .init($0.purpose))
                },
            windowDays: settings.samples.windowDays)
    }
}
