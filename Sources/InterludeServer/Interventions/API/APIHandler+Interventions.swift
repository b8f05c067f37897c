import Foundation
import InterludeCore
import OpenAPIRuntime

extension APIHandler {
    func listPatientInterventions(_ input: Operations.ListPatientInterventions.Input) async throws
        -> Operations.ListPatientInterventions.Output
    {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.chart(of: input.path.patientId).interventions(), request)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next), body: .json(page.items.map(Components.Schemas.Intervention.init))
            ))
    }

    func sendIntervention(_ input: Operations.SendIntervention.Input) async throws -> Operations.SendIntervention.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let chart: PatientChart
        if let rawStudy = body.studyId {
            guard let studyID = UUID(uuidString: rawStudy) else { throw AppError.field("studyId", .invalidFormat) }
            chart = try await context.chart(of: input.path.patientId, in: studyID)
        } else {
            chart = try await context.chart(of: input.path.patientId)
        }
        var id: UUID?
        if let raw = body.id {
            guard let parsed = UUID(uuidString: raw) else { throw AppError.field("id", .invalidFormat) }
            id = parsed
        }
        let draft = try InterventionDraft.validate(kindNamed: body.kind.rawValue, text: body.text)
        let sent = try await chart.sendIntervention(draft, id: id)
        return .created(.init(body: .json(.init(sent))))
    }

    func listMyInterventions(_ input: Operations.ListMyInterventions.Input) async throws
        -> Operations.ListMyInterventions.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.interventions.received(by: patient.requireID()), request)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next), body: .json(page.items.map(Components.Schemas.Intervention.init))
            ))
    }

    func markMyInterventionSeen(_ input: Operations.MarkMyInterventionSeen.Input) async throws
        -> Operations.MarkMyInterventionSeen.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let seen = try await context.interventions.markSeen(try pathID(input.path.interventionId), by: patient)
        return .ok(.init(body: .json(.init(seen))))
    }

    func completeMyIntervention(_ input: Operations.CompleteMyIntervention.Input) async throws
        -> Operations.CompleteMyIntervention.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let completed = try await context.interventions.complete(try pathID(input.path.interventionId), by: patient)
        return .ok(.init(body: .json(.init(completed))))
    }

    func getMyBackup(_ input: Operations.GetMyBackup.Input) async throws -> Operations.GetMyBackup.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        guard let backup = try await context.backups.backup(of: patient) else { throw AppError.notFound }
        return .ok(.init(body: .json(.init(backup))))
    }

    func putMyBackup(_ input: Operations.PutMyBackup.Input) async throws -> Operations.PutMyBackup.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let envelope = BackupService.Envelope(
            algorithm: body.envelope.algorithm.rawValue, iterations: body.envelope.iterations, salt: body.envelope.salt,
            nonce: body.envelope.nonce, ciphertext: body.envelope.ciphertext)
        let stored = try await context.backups.store(envelope, baseVersion: body.baseVersion, for: patient)
        return .ok(.init(body: .json(.init(stored))))
    }

    func listStudyRules(_ input: Operations.ListStudyRules.Input) async throws -> Operations.ListStudyRules.Output {
        let context = try APIContext.current()
        let staff = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.viewRules, in: try pathID(input.path.studyId), by: staff)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        // A study's rules are stored ones, each with its id and moment.
        let stored = try await context.rules.rules(in: grant).compactMap { rule in rule.id.map { (rule, $0) } }
        let page = ListPage(
            of: stored, request, moment: { $0.0.createdAt ?? .distantPast }, id: \.1, descending: false
        ).map(\.0)
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try page.items.map(Components.Schemas.Rule.init))))
    }

    func addStudyRule(_ input: Operations.AddStudyRule.Input) async throws -> Operations.AddStudyRule.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let staff = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.editRules, in: try pathID(input.path.studyId), by: staff)
        let stored = try await context.rules.add(try StudyRule(body), in: grant)
        return .created(.init(body: .json(try .init(stored))))
    }

    func deleteStudyRule(_ input: Operations.DeleteStudyRule.Input) async throws -> Operations.DeleteStudyRule.Output {
        let context = try APIContext.current()
        let staff = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.editRules, in: try pathID(input.path.studyId), by: staff)
        try await context.rules.remove(try pathID(input.path.ruleId), in: grant)
        return .noContent
    }

    func dryRunStudyRule(_ input: Operations.DryRunStudyRule.Input) async throws -> Operations.DryRunStudyRule.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let staff = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.dryRunRules, in: try pathID(input.path.studyId), by: staff)
        guard let patientID = UUID(uuidString: body.patientId) else {
            throw AppError.field("patientId", .invalidFormat)
        }
        let lines = try await context.rules.dryRun(try StudyRule(body.rule), in: grant, patientID: patientID)
        return .ok(.init(body: .json(lines.map { .init(at: $0.at, fires: $0.reason != nil, reason: $0.reason) })))
    }

    func listAlerts(_ input: Operations.ListAlerts.Input) async throws -> Operations.ListAlerts.Output {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let staff = try await context.user(.therapist, .researcher, .admin)
        // Open ones first, newest first.
        let page = ListPage(
            of: try await context.alertInbox(staff).alerts(), request,
            key: { ($0.opened.record.acknowledgedAt == nil ? "1" : "0") + SortKey.moment($0.opened.record.createdAt) },
            id: { $0.opened.record.id! })
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try page.items.map { try .init($0, for: staff) })))
    }

    func acknowledgeAlert(_ input: Operations.AcknowledgeAlert.Input) async throws -> Operations.AcknowledgeAlert.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let staff = try await context.user(.therapist, .researcher, .admin)
        let alert = try await context.alertInbox(staff).acknowledge(try pathID(input.path.alertId), note: body.note)
        return .ok(.init(body: .json(try .init(alert, for: staff))))
    }
}

extension APIContext {
    var interventions: InterventionService { InterventionService(database: database, services: services) }
    var backups: BackupService { BackupService(database: database, services: services) }
    var rules: RuleService { RuleService(database: database, services: services) }
    func alertInbox(_ staff: UserRecord) -> AlertInbox {
        AlertInbox(staff: staff, database: database, services: services)
    }
}

extension Components.Schemas.Intervention {
    init(_ opened: InterventionService.Opened) {
        self.init(
            id: opened.id.lowercasedText, kind: .init(rawValue: opened.kind.rawValue) ?? .message,
            origin: .init(rawValue: opened.origin.rawValue) ?? .therapist, text: opened.text,
            state: .init(rawValue: opened.state.rawValue) ?? .sent, sentAt: opened.deliverAt, seenAt: opened.seenAt,
            completedAt: opened.completedAt)
    }
}

extension Components.Schemas.Backup {
    init(_ stored: BackupService.Stored) {
        self.init(
            version: stored.version, updatedAt: stored.updatedAt,
            envelope: .init(
                algorithm: .init(rawValue: stored.envelope.algorithm) ?? .pbkdf2Sha256Aes256Gcm,
                iterations: stored.envelope.iterations, salt: stored.envelope.salt, nonce: stored.envelope.nonce,
                ciphertext: stored.envelope.ciphertext))
    }
}

extension Components.Schemas.Alert {
    init(_ shown: AlertInbox.Shown, for staff: UserRecord) throws {
        let opened = shown.opened
        let record = opened.record
        self.init(
            id: try record.requireID().lowercasedText, patientId: record.$patient.id.lowercasedText,
            patientCode: opened.patientCode, priority: .init(rawValue: record.priority.rawValue) ?? .normal,
            reason: opened.reason,
            createdAt: record.createdAt, acknowledgedAt: record.acknowledgedAt, note: opened.note,
            escalatedAt: record.escalatedAt,
            escalated: record.$escalatedTo.id != nil && record.$escalatedTo.id == staff.id)
    }
}

extension Components.Schemas.Rule {
    init(_ stored: RuleService.Stored) throws {
        let definition = try JSONDecoder().decode(
            Components.Schemas.RuleDefinition.self, from: try JSONEncoder().encode(stored.rule))
        self.init(
            id: stored.id?.lowercasedText ?? "", name: definition.name, trigger: definition.trigger,
            action: definition.action)
    }
}

extension StudyRule {
    /// Reads a rule as the API receives it; a missing or wrong part is a problem with that field.
    init(_ body: Components.Schemas.RuleDefinition) throws {
        do {
            self = try JSONDecoder().decode(StudyRule.self, from: try JSONEncoder().encode(body))
        } catch let error as DecodingError {
            switch error {
            case .keyNotFound(let key, let context):
                throw AppError.field(Self.field(context.codingPath + [key]), .required)
            case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
                throw AppError.field(Self.field(context.codingPath), .invalidValue)
            @unknown default:
                throw AppError.malformedRequest
            }
        }
    }

    /// `trigger.condition.clauses.0.id`, as validation names fields.
    private static func field(_ path: [any CodingKey]) -> String {
        path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
