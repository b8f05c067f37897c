import Fluent
import Foundation
import InterludeCore

// MARK: - Studies

extension APIHandler {
    func listStudies(_ input: Operations.ListStudies.Input) async throws -> Operations.ListStudies.Output {
        let context = try APIContext.current()
        let user = try await context.authenticated().user
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        if user.role == .patient {
            let entries = ListPage(
                of: try await context.studies.studies(forPatient: user.requireID()), request,
                key: { SortKey.words($0.study.title) }, id: { $0.study.id! }, descending: false)
            let consents = try await context.consents.currentVersions(of: entries.items.compactMap(\.study.id))
            return .ok(
                .init(
                    headers: .init(nextCursor: entries.next),
                    body: .json(
                        try entries.items.map {
                            try .init($0.study, enrollment: $0.enrollment, consent: consents[$0.study.id!])
                        })))
        }
        let studies = ListPage(
            of: try await context.access.studies(where: .viewStudy, for: user, kind: .research), request,
            moment: \.createdAt,
            id: { $0.id! })
        return .ok(
            .init(
                headers: .init(nextCursor: studies.next),
                body: .json(try studies.items.map { try .init($0, enrollment: nil, staff: true) })))
    }

    func createStudy(_ input: Operations.CreateStudy.Input) async throws -> Operations.CreateStudy.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let researcher = try await context.user(.researcher, .admin)
        let study = try await context.studies.create(by: researcher, draft: try body.draft(hasPassword: false))
        return .created(.init(body: .json(try .init(study, enrollment: nil, staff: true))))
    }

    func getStudy(_ input: Operations.GetStudy.Input) async throws -> Operations.GetStudy.Output {
        let context = try APIContext.current()
        let user = try await context.authenticated().user
        let studyID = try pathID(input.path.studyId)
        if user.role == .patient {
            let entry = try await context.studies.study(studyID, forPatient: user.requireID())
            let consents = try await context.consents.currentVersions(of: [studyID])
            return .ok(
                .init(body: .json(try .init(entry.study, enrollment: entry.enrollment, consent: consents[studyID]))))
        }
        let grant = try await context.access.require(.viewStudy, in: studyID, by: user)
        return .ok(.init(body: .json(try .init(grant.study, enrollment: nil, staff: true))))
    }

    func updateStudy(_ input: Operations.UpdateStudy.Input) async throws -> Operations.UpdateStudy.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.researcher, .admin)
        let studyID = try pathID(input.path.studyId)
        let grant = try await context.access.require(.editStudy, in: studyID, by: user)
        let draft = try body.draft(hasPassword: grant.study.joinPasswordHash != nil)
        let study = try await context.studies.update(grant, draft: draft)
        return .ok(.init(body: .json(try .init(study, enrollment: nil, staff: true))))
    }

    func setStudyArms(_ input: Operations.SetStudyArms.Input) async throws -> Operations.SetStudyArms.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.designArms, in: try pathID(input.path.studyId), by: user)
        let study = try await context.studies.setArms(
            body.arms, allocation: body.allocation?.rawValue,
            settings: try body.allocationSettings?.settings() ?? AllocationSettings(), in: grant)
        return .ok(.init(body: .json(try .init(study, enrollment: nil, staff: true))))
    }

    func joinStudy(_ input: Operations.JoinStudy.Input) async throws -> Operations.JoinStudy.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        try checkLimits([
            (body.consentVersion, "consentVersion", StudyDraft.consentVersionMaxLength),
            (body.password, "password", StudyDraft.passwordMaxLength),
        ])
        let enrollment = try await context.studies.join(
            patient: patient, studyID: try pathID(input.path.studyId), consentVersion: body.consentVersion,
            modules: body.modules?.additionalProperties ?? [:], password: body.password, client: context.client)
        return .created(.init(body: .json(try .init(enrollment))))
    }

    func leaveStudy(_ input: Operations.LeaveStudy.Input) async throws -> Operations.LeaveStudy.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try await context.studies.leave(
            patient: patient, studyID: try pathID(input.path.studyId), erase: input.query.erase ?? false)
        return .noContent
    }

    func listEnrollments(_ input: Operations.ListEnrollments.Input) async throws -> Operations.ListEnrollments.Output {
        let context = try APIContext.current()
        let user = try await context.user(.researcher, .therapist, .admin)
        let grant = try await context.access.require(.viewParticipants, in: try pathID(input.path.studyId), by: user)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let participants = try await context.studies.participants(of: grant)
        let page = ListPage(of: participants, request, moment: \.enrollment.createdAt, id: { $0.enrollment.id! })
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.Participant.init))))
    }

    func decideEnrollment(_ input: Operations.DecideEnrollment.Input) async throws
        -> Operations.DecideEnrollment.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.researcher, .therapist, .admin)
        let grant = try await context.access.require(.decideEnrollment, in: try pathID(input.path.studyId), by: user)
        let participant = try await context.studies.decide(
            in: grant, enrollmentID: try pathID(input.path.enrollmentId), approve: body.approve)
        return .ok(.init(body: .json(try .init(participant))))
    }
}

extension APIHandler {
    func listAllocations(_ input: Operations.ListAllocations.Input) async throws -> Operations.ListAllocations.Output {
        let context = try APIContext.current()
        let user = try await context.user(.researcher, .therapist, .admin)
        let grant = try await context.access.require(.exportData, in: try pathID(input.path.studyId), by: user)
        let (seed, entries) = try await context.allocations.list(in: grant)
        return .ok(
            .init(
                body: .json(.init(seed: String(seed), entries: entries.map(Components.Schemas.AllocationLogEntry.init)))
            ))
    }

    func correctAllocation(_ input: Operations.CorrectAllocation.Input) async throws
        -> Operations.CorrectAllocation.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.researcher, .therapist, .admin)
        let grant = try await context.access.require(.editStudy, in: try pathID(input.path.studyId), by: user)
        let corrected = try await context.allocations.correct(
            in: grant, enrollmentID: UUID(uuidString: body.enrollmentId), arm: body.arm, reason: body.reason)
        return .created(.init(body: .json(.init(corrected))))
    }
}

extension Components.Schemas.AllocationLogEntry {
    init(_ listed: StudyAllocations.Listed) {
        let record = listed.record
        self.init(
            sequence: record.sequence, kind: .init(rawValue: record.kind.rawValue)!, pseudonym: listed.pseudonym,
            arm: record.arm, method: .init(rawValue: record.method.rawValue)!, stratum: record.stratum,
            block: record.block, slot: record.slot, cycle: record.cycle, probability: record.probability,
            reason: record.reason, recordedBy: record.recordedBy?.lowercasedText ?? "design",
            recordedAt: record.createdAt)
    }
}

extension Components.Schemas.StudyInput {
    func draft(hasPassword: Bool) throws -> StudyDraft {
        try StudyDraft.validate(
            title: LanguageTexts.merged(title, titles), description: LanguageTexts.merged(description, descriptions),
            consentText: LanguageTexts.merged(consentText, consentTexts), consentVersion: consentVersion,
            joinMode: joinMode.rawValue, joinPassword: joinPassword, status: status?.rawValue,
            hasPassword: hasPassword, arms: arms ?? [], allocation: allocation?.rawValue,
            allocationSettings: try allocationSettings?.settings() ?? AllocationSettings(),
            asksDemographics: asksDemographics ?? false,
            retentionDays: retentionDays ?? StudyDraft.defaultRetentionDays, comparison: comparison?.rawValue)
    }
}

extension APIContext {
    var studies: StudyService { StudyService(database: database, services: services) }
    var allocations: StudyAllocations { StudyAllocations(database: database, services: services) }
}

extension Components.Schemas.AllocationSettings {
    /// The settings as sent; a first cycle day that is no date is named at the door.
    func settings() throws -> AllocationSettings {
        let defaults = AllocationSettings()
        let start = try cycleStart.map { text in
            guard let day = LocalDate(text) else {
                throw AppError.field("allocationSettings.cycleStart", .invalidFormat)
            }
            return day
        }
        return AllocationSettings(
            ratios: ratios ?? [], targets: targets ?? [], control: control ?? [],
            blockMultiples: blockMultiples ?? defaults.blockMultiples,
            factors: (factors ?? []).compactMap { AllocationFactor(rawValue: $0.rawValue) },
            preferred: preferred ?? defaults.preferred, cycleDays: cycleDays, cycleStart: start,
            cycleAdmissions: cycleAdmissions, drawnStart: drawnStart ?? false)
    }

    init(_ settings: AllocationSettings) {
        self.init(
            ratios: settings.ratios, targets: settings.targets, control: settings.control,
            blockMultiples: settings.blockMultiples,
            factors: settings.factors.map { .init(rawValue: $0.rawValue)! }, preferred: settings.preferred,
            cycleDays: settings.cycleDays, cycleStart: settings.cycleStart?.description,
            cycleAdmissions: settings.cycleAdmissions, drawnStart: settings.drawnStart)
    }
}
