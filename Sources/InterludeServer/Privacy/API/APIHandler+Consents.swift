import Foundation
import InterludeCore

// MARK: - Consents: study versions for the team, decisions for the person

extension APIHandler {
    func getMyConsents(_ input: Operations.GetMyConsents.Input) async throws -> Operations.GetMyConsents.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let overview = try await context.consents.overview(of: patient, language: context.request.language)
        return .ok(
            .init(
                body: .json(
                    .init(
                        documents: try overview.documents.map { try .init($0, studies: overview.studies) },
                        history: try overview.history.map { try .init($0, studies: overview.studies) }))))
    }

    func decideConsent(_ input: Operations.DecideConsent.Input) async throws -> Operations.DecideConsent.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        try checkLimits([(body.version, "version", ConsentVersionDraft.versionMaxLength)])
        let studyID = try body.studyId.map { raw in
            guard let id = UUID(uuidString: raw) else { throw AppError.field("studyId", .invalidFormat) }
            return id
        }
        let decision = try await context.consents.decide(
            patient: patient, studyID: studyID, version: body.version,
            modules: body.modules?.additionalProperties ?? [:])
        let studies = try await studyID.asyncMap { try await StudyRecord.find($0, on: context.database) }.flatMap { $0 }
        return .created(.init(body: .json(try .init(decision, studies: studies.map { [$0.id!: $0] } ?? [:]))))
    }

    func listConsentVersions(_ input: Operations.ListConsentVersions.Input) async throws
        -> Operations.ListConsentVersions.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.researcher, .therapist, .admin)
        let grant = try await context.access.require(.viewStudy, in: try pathID(input.path.studyId), by: user)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(
            of: try await context.consents.versions(in: grant), request, key: { SortKey.number($0.sequence) },
            id: { $0.id! },
            descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.ConsentVersion.init))))
    }

    func createConsentVersion(_ input: Operations.CreateConsentVersion.Input) async throws
        -> Operations.CreateConsentVersion.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.researcher, .admin)
        let grant = try await context.access.require(.editStudy, in: try pathID(input.path.studyId), by: user)
        var texts: [String: String] = [:]
        if let en = body.texts.en { texts["en"] = en }
        if let de = body.texts.de { texts["de"] = de }
        let draft = try ConsentVersionDraft.validate(
            version: body.version, texts: texts, modules: body.modules ?? [],
            reconsentRequired: body.reconsentRequired ?? false, arm: body.arm,
            arms: StudyArms.names(of: grant.study))
        return .created(.init(body: .json(try .init(try await context.consents.create(draft, in: grant)))))
    }
}

extension APIContext {
    var consents: ConsentService { ConsentService(database: database, services: services) }
}

extension Components.Schemas.ConsentVersion {
    init(_ record: ConsentVersionRecord) throws {
        let texts = record.localizedTexts
        self.init(
            id: try record.requireID().lowercasedText, studyId: record.$study.id.lowercasedText,
            sequence: record.sequence, version: record.version,
            texts: .init(en: texts.values[.en], de: texts.values[.de]),
            modules: record.offeredModules.map { .init(rawValue: $0.rawValue)! },
            reconsentRequired: record.reconsentRequired,
            collects: record.collectedKinds.sorted { $0.rawValue < $1.rawValue }.compactMap {
                .init(rawValue: $0.rawValue)
            },
            arm: record.arm,
            createdAt: record.createdAt)
    }
}

extension Components.Schemas.ConsentDecision {
    init(_ record: ConsentRecord, studies: [UUID: StudyRecord]) throws {
        let study = record.$study.id.flatMap { studies[$0] }
        self.init(
            id: try record.requireID().lowercasedText,
            document: .init(rawValue: record.document) ?? .studyConsent,
            studyId: record.$study.id?.lowercasedText, studyTitle: study?.title, version: record.version,
            modules: .init(
                additionalProperties: Dictionary(
                    uniqueKeysWithValues: (record.choices?.granted ?? [:]).map { ($0.key.rawValue, $0.value) })),
            decidedAt: record.grantedAt, method: record.method.flatMap { .init(rawValue: $0.rawValue) },
            replacedAt: record.replacedAt, revokedAt: record.revokedAt)
    }
}

extension Components.Schemas.ConsentDocumentState {
    init(_ state: ConsentService.DocumentState, studies: [UUID: StudyRecord]) throws {
        self.init(
            document: state.document == .privacyPolicy ? .privacyPolicy : .studyConsent,
            studyId: state.study?.id?.lowercasedText, studyTitle: state.study?.title, version: state.version,
            text: state.text, modules: state.modules.map { .init(rawValue: $0.rawValue)! },
            collects: state.collects.map {
                $0.sorted { $0.rawValue < $1.rawValue }.compactMap { .init(rawValue: $0.rawValue) }
            },
            reconsentRequired: state.reconsentRequired, mustAnswer: state.mustAnswer,
            decision: try state.decision.map { try .init($0, studies: studies) },
            changes: state.changes?.map { .init(kind: .init(rawValue: $0.kind.rawValue)!, text: $0.text) })
    }
}
