import Fluent
import Foundation
import InterludeCore
import SQLKit

/// The one list of every table that holds data about a person, and how each loses it when the person's account
/// is deleted. A test checks that every table of the schema is named here, either as holding personal data or
/// as holding none, so a new table cannot be forgotten.
enum ErasureMap {
    /// Tables with rows about a person, in the order they are emptied (children before parents).
    static let personalTables: [String] = [
        FileChunkRecord.schema,
        SelfExportRecord.schema,
        ExportParticipantRecord.schema,
        ExportRecord.schema,
        TimeZoneChangeRecord.schema,
        AccessTokenRecord.schema,
        SyncMutationRecord.schema,
        SyncTombstoneRecord.schema,
        NotificationRecord.schema,
        PinnedNoteRecord.schema,
        AlertRecord.schema,
        RuleFiringRecord.schema,
        DecisionPointRecord.schema,
        InterventionRecord.schema,
        MessageChoiceRecord.schema,
        InterventionBackupRecord.schema,
        DeviceRecord.schema,
        NotificationPreferenceRecord.schema,
        ResponseRecord.schema,
        EntryRecord.schema,
        SampleRecord.schema,
        SampleChoiceRecord.schema,
        HealthImportRecord.schema,
        PromptRecord.schema,
        PlanAdjustmentRecord.schema,
        PlanRecord.schema,
        AppointmentRecord.schema,
        CalendarFeedRecord.schema,
        SessionRecord.schema,
        EmailTokenRecord.schema,
        RateLimitEventRecord.schema,
        ConsentRecord.schema,
        AllocationRecord.schema,
        EnrollmentRecord.schema,
        PairingCodeRecord.schema,
        PatientProfileRecord.schema,
        TherapistProfileRecord.schema,
        StudyStaffRecord.schema,
        AuditEventRecord.schema,
        UserRecord.schema,
    ]

    /// Tables that never hold data about a person.
    static let impersonalTables: Set<String> = [
        StudyRecord.schema,
        ConsentVersionRecord.schema,
        InstrumentVersionRecord.schema,
        InstrumentPinRecord.schema,
        InterventionTemplateRecord.schema,
        StudyMessageRecord.schema,
        MessagePlanRecord.schema,
        DecisionPlanRecord.schema,
        RuleRecord.schema,
        SettingRecord.schema,
        ErasureRecord.schema,
        ErasedIDRecord.schema,
        "_fluent_migrations",
    ]
}

/// Deletes an account, or what one person gave in one study, and every row about it, leaving an erasure
/// tombstone with a keyed hash of every id it removed.
struct ErasureService: Sendable {
    let database: any Database
    let services: AppServices

    /// What an erasure removed, for the person's receipt: rows per table, and when.
    struct Receipt: Sendable {
        let erasureID: UUID
        let erasedAt: Date
        let counts: [String: Int]
    }

    /// A patient deletes their own account, confirming with the password.
    func deleteOwnAccount(_ user: UserRecord, password: String) async throws {
        guard user.role == .patient else { throw AppError.forbidden(.notAllowed) }
        try await RateLimiter(database: database, services: services).reverify(password, of: user, field: "password")
        let email = user.email
        let language = user.language
        let zone = TimeZone(identifier: user.timeZone) ?? .gmt
        let receipt = try await erase(user)
        await ErasureReceipts(services: services).send(receipt, to: email, language: language, zone: zone)
    }

    /// Removes the person's rows table by table as `ErasureMap` lists them, in one transaction, and the outbox
    /// mail addressed to them. Without a tombstone only when erasure is applied again to a restored backup, whose
    /// tombstone exists already.
    @discardableResult
    func erase(_ user: UserRecord, leavingTombstone: Bool = true) async throws -> Receipt {
        let addresses = try await ErasureRun.addresses(of: try user.requireID(), email: user.email, on: database)
        let receipt = try await run(
            try ErasureRun(user: user, scope: .account, study: nil), leavingTombstone: leavingTombstone)
        for address in addresses { OutboxMail(services: services).remove(addressedTo: address) }
        return receipt
    }

    /// Removes what one person gave in one study: their enrolment, consents, prompts, responses, plans,
    /// interventions and alerts there (and a practice's appointments), leaving the rest of the account.
    @discardableResult
    func eraseStudyData(of user: UserRecord, in study: StudyRecord, leavingTombstone: Bool = true) async throws
        -> Receipt
    {
        try await run(try ErasureRun(user: user, scope: .studyData, study: study), leavingTombstone: leavingTombstone)
    }

    private func run(_ plan: ErasureRun, leavingTombstone: Bool) async throws -> Receipt {
        let now = services.clock.now
        let key = try await services.serverSecret.key(on: database, now: now)
        let tombstone = ErasureRecord(
            id: plan.tombstoneID, role: plan.role, scope: plan.scope, studyID: plan.studyID, erasedAt: now)
        let (withdrawn, removed) = try await database.atomically { database in
            var plan = plan
            // Exports that hold the person's data are withdrawn: their files are removed once this commits.
            let exports = try await plan.exportsHoldingPerson(on: database)
            for table in ErasureMap.personalTables {
                try await plan.erase(table: table, services: services, on: database)
            }
            try await ExportRecord.query(on: database).filter(\.$id ~~ exports)
                .set(\.$status, to: .expired).set(\.$expiresAt, to: now).set(
                    \.$error, to: ExportService.withdrawnAfterErasure
                )
                .update()
            if leavingTombstone {
                try await tombstone.create(on: database)
                try await ErasedIDs(database: database, services: services).remember(
                    plan.removed, erasure: plan.tombstoneID, key: key)
            }
            return (exports, plan.removed)
        }
        let copies = removed[SelfExportRecord.schema] ?? []
        let imports = removed[HealthImportRecord.schema] ?? []
        await services.files(on: database).remove(
            withdrawn.map(StoredFile.export) + copies.map(StoredFile.selfExport) + imports.map(StoredFile.healthImport))
        for id in withdrawn { ExportFiles(services: services).removeWork(id) }
        for id in copies { SelfExportFiles(services: services).removeWork(id) }
        return Receipt(
            erasureID: plan.tombstoneID, erasedAt: now, counts: removed.mapValues(\.count).filter { $0.value > 0 })
    }
}

enum ErasureError: Error, CustomStringConvertible {
    case tableWithoutRule(String)

    var description: String {
        switch self {
        case .tableWithoutRule(let table): return "ErasureMap names table \(table) but has no rule for it"
        }
    }
}
