import Foundation
import InterludeCore
import OpenAPIRuntime

// MARK: - Samples

extension APIHandler {
    func uploadMySamples(_ input: Operations.UploadMySamples.Input) async throws -> Operations.UploadMySamples.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let result = try await context.samples.ingest(body.samples.map(Sample.Raw.init), for: patient.requireID())
        let localizer = context.services.localizer
        let language = context.request.language
        return .ok(
            .init(
                body: .json(
                    .init(
                        stored: result.stored, duplicates: result.duplicates,
                        rejected: result.rejected.map { rejected in
                            .init(
                                index: rejected.index,
                                errors: rejected.errors.compactMap {
                                    Components.Schemas.FieldProblem($0, localizer: localizer, language: language)
                                })
                        }))))
    }

    func listMySamples(_ input: Operations.ListMySamples.Input) async throws -> Operations.ListMySamples.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try checkLimits([(input.query._type, "type", 60), (input.query.after, "after", 20)])
        let type = try input.query._type.map { raw in
            guard let type = SampleType(rawValue: raw) else { throw AppError.field("type", .notAnOption) }
            return type
        }
        let offset =
            try input.query.after.map { raw in
                guard let offset = Int(raw), offset >= 0 else { throw AppError.field("after", .invalidFormat) }
                return offset
            } ?? 0
        let limit = Sample.batchLimit
        let rows = try await context.samples.list(
            of: patient.requireID(), type: type, from: input.query.from, to: input.query.to, offset: offset,
            limit: limit + 1)
        return .ok(
            .init(
                body: .json(
                    .init(
                        samples: rows.prefix(limit).map { Components.Schemas.Sample($0.sample) },
                        next: rows.count > limit ? String(offset + limit) : nil))))
    }

    func listMySampleTypes(_ input: Operations.ListMySampleTypes.Input) async throws
        -> Operations.ListMySampleTypes.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        return .ok(
            .init(
                body: .json(
                    try await context.samples.choices(of: patient.requireID()).map {
                        Components.Schemas.SampleTypeChoice($0, language: patient.language)
                    })))
    }

    func setMySampleType(_ input: Operations.SetMySampleType.Input) async throws -> Operations.SetMySampleType.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        guard let type = SampleType(rawValue: input.path._type) else { throw AppError.notFound }
        let choice = try await context.samples.setEnabled(type, body.enabled, for: patient.requireID())
        return .ok(.init(body: .json(.init(choice, language: patient.language))))
    }

    func getMySampleDays(_ input: Operations.GetMySampleDays.Input) async throws -> Operations.GetMySampleDays.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let (type, days) = try Self.dayQuery(type: input.query._type, days: input.query.days)
        let rows = try await context.samples.days(type, of: patient, days: days)
        return .ok(
            .init(
                body: .json(
                    rows.map {
                        .init(date: $0.date.description, value: $0.value?.value, count: $0.value?.count, mood: $0.mood)
                    })))
    }

    /// A type and a number of days from a query, checked.
    static func dayQuery(type raw: String, days: Int?) throws -> (SampleType, Int) {
        guard let type = SampleType(rawValue: raw) else { throw AppError.field("type", .notAnOption) }
        let days = days ?? 30
        guard (7...366).contains(days) else { throw AppError.field("days", .outOfRange, limit: 366) }
        return (type, days)
    }
}

extension APIContext {
    var samples: SampleService { SampleService(database: database, services: services) }
}

extension Sample.Raw {
    init(_ input: Components.Schemas.SampleInput) {
        let dates = APIDateTranscoder()
        self.init(
            type: input._type, value: input.value, unit: input.unit,
            start: input.startsAt.flatMap { try? dates.decode($0) },
            end: input.endsAt.flatMap { try? dates.decode($0) },
            sourceID: input.sourceId,
            source: .init(
                app: input.source?.app, deviceName: input.source?.deviceName, deviceModel: input.source?.deviceModel,
                osVersion: input.source?.osVersion),
            motionContext: input.motionContext)
        if input.startsAt != nil, start == nil { unreadable.insert("startsAt") }
        if input.endsAt != nil, end == nil { unreadable.insert("endsAt") }
    }
}

extension Components.Schemas.Sample {
    init(_ sample: Sample) {
        self.init(
            _type: sample.type.rawValue, value: sample.value, unit: sample.type.unit, startsAt: sample.start,
            endsAt: sample.end,
            sourceId: sample.sourceID,
            source: .init(
                app: sample.source.app, deviceName: sample.source.deviceName, deviceModel: sample.source.deviceModel,
                osVersion: sample.source.osVersion),
            motionContext: sample.motionContext?.rawValue)
    }
}

extension Components.Schemas.SampleTypeChoice {
    /// The reasons in `language` where written in it, else in the language they are.
    init(_ choice: SampleService.Choice, language: Language) {
        let purposes = choice.asked?.purposes ?? []
        self.init(
            _type: choice.type.rawValue, unit: choice.type.unit, units: choice.type.acceptedUnits.keys.sorted(),
            healthKitIdentifier: choice.type.healthKitIdentifier, purposes: purposes.map { $0.text(language) },
            purposeTexts: purposes.map(LanguageTexts.init),
            windowDays: choice.asked?.windowDays, enabled: choice.enabled, count: choice.count)
    }
}

extension Components.Schemas.FieldProblem {
    /// A field problem as the problem document names it, in the caller's language.
    init?(_ error: FieldError, localizer: Localizer, language: Language) {
        guard let code = CodePayload(rawValue: error.code.rawValue) else { return nil }
        self.init(field: error.field, code: code, detail: localizer.message(for: error, language), limit: error.limit)
    }
}

extension APIHandler {
    func getMySampleChart(_ input: Operations.GetMySampleChart.Input) async throws -> Operations.GetMySampleChart.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let (type, days) = try Self.dayQuery(type: input.query._type, days: input.query.days)
        let width = try ChartWidth.checked(input.query.width, otherwise: SampleDayChart.desktopWidth)
        let language = context.request.language
        let chart = SampleDayChart(
            type: type, rows: try await context.samples.days(type, of: patient, days: days),
            localizer: context.services.localizer,
            language: language, display: DateDisplay(language: language, timeZone: patient.zone), width: width)
        return .ok(.init(body: .imageSvgXml(HTTPBody(chart.svg))))
    }
}
