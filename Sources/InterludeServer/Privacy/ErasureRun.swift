import Fluent
import Foundation
import InterludeCore

/// One erasure under way: whose data, how far it reaches, and the ids removed so far, table by table. Run to
/// collect instead, it deletes nothing and keeps every row it would have removed: the person's own copy of
/// their data holds exactly what erasure takes.
struct ErasureRun: Sendable {
    enum Mode: Sendable {
        case erase
        case collect
    }

    let mode: Mode
    let userID: UUID
    let email: String
    let role: Role
    let scope: ErasureScope
    /// The study whose data goes, for a `studyData` erasure.
    let studyID: UUID?
    /// Whether that study is a therapist's practice, whose appointments go with it.
    let isPractice: Bool
    let tombstoneID = UUID()
    private(set) var removed: [String: [UUID]] = [:]
    /// In `collect` mode, each row found, as JSON, by table and id.
    private(set) var rows: [String: [UUID: Data]] = [:]

    init(user: UserRecord, scope: ErasureScope, study: StudyRecord?, mode: Mode = .erase) throws {
        self.mode = mode
        userID = try user.requireID()
        email = user.email
        role = user.role
        self.scope = scope
        studyID = study?.id
        isPractice = study?.joinMode == .pairingCode
    }

    private var wholeAccount: Bool { scope == .account }

    /// Every address the person is known under: the one now, and those their links were sent to (an address they
    /// corrected or changed).
    static func addresses(of userID: UUID, email: String, on database: any Database) async throws -> Set<String> {
        let links = try await EmailTokenRecord.query(on: database).filter(\.$user.$id == userID)
            .filter(\.$purpose != .invitation).all()
        return Set([email] + links.map(\.email))
    }

    /// Every id removed, in any table.
    var removedIDs: Set<UUID> { Set(removed.values.joined()) }

    /// Exports holding the person's data that this erasure takes back: all of theirs, or the study's.
    func exportsHoldingPerson(on database: any Database) async throws -> [UUID] {
        var query = ExportParticipantRecord.query(on: database).filter(\.$patient.$id == userID)
        if let exports = try await studyExports(on: database) { query = query.filter(\.$export.$id ~~ exports) }
        return try await query.all(\.$export.$id)
    }

    /// The study's exports, or nil when the whole account goes.
    private func studyExports(on database: any Database) async throws -> [UUID]? {
        guard let studyID else { return nil }
        return try await ExportRecord.query(on: database).filter(\.$study.$id == studyID).all(\.$id)
    }

    /// Empties one table of what this erasure takes, remembering the ids of the rows it deleted.
    mutating func erase(table: String, services: AppServices, on database: any Database) async throws {
        switch table {
        case ExportParticipantRecord.schema:
            var query = ExportParticipantRecord.query(on: database).filter(\.$patient.$id == userID)
            if let exports = try await studyExports(on: database) { query = query.filter(\.$export.$id ~~ exports) }
            try await remove(query, from: table)
        case ExportRecord.schema:
            // Exports the person asked for stay in the study's history without naming them.
            guard wholeAccount else { return }
            guard mode == .erase else {
                return try await remove(
                    ExportRecord.query(on: database).filter(\.$requestedBy.$id == userID), from: table)
            }
            try await ExportRecord.query(on: database).filter(\.$requestedBy.$id == userID).set(
                \.$requestedBy.$id, to: nil
            ).update()
        case FileChunkRecord.schema:
            // Stored files kept in the database: the person's copies and uploads, and the exports that hold the
            // person, withdrawn by this erasure. (In the data directory they go once the erasure commits.) The
            // person's own copy lists those exports, copies and uploads, not their bytes.
            guard mode == .erase else { return }
            var files = try await exportsHoldingPerson(on: database).map(StoredFile.export)
            if wholeAccount {
                files += try await SelfExportRecord.query(on: database).filter(\.$user.$id == userID).all(\.$id).map(
                    StoredFile.selfExport)
                files += try await HealthImportRecord.query(on: database).filter(\.$patient.$id == userID).all(\.$id)
                    .map(StoredFile.healthImport)
            }
            guard !files.isEmpty else { return }
            // With what a writer stopped in the middle of putting left under a name of its own (`<name>#…`).
            let chunks = FileChunkRecord.query(on: database).group(.or) { any in
                any.filter(\.$file ~~ files.map(\.name))
                for file in files { any.filter(\.$file =~ "\(file.name)#") }
            }
            try await remove(chunks, from: table)
        case SelfExportRecord.schema:
            // The person's own copies go with the account, their files once the erasure commits.
            guard wholeAccount else { return }
            try await remove(SelfExportRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case AccessTokenRecord.schema:
            guard wholeAccount else { return }
            try await remove(AccessTokenRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case TimeZoneChangeRecord.schema:
            guard wholeAccount else { return }
            try await remove(TimeZoneChangeRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case SyncMutationRecord.schema:
            try await eraseSyncMutations(on: database)
        case SyncTombstoneRecord.schema:
            guard wholeAccount else { return }
            try await remove(SyncTombstoneRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case PinnedNoteRecord.schema:
            try await remove(
                inStudy(PinnedNoteRecord.query(on: database).filter(\.$patient.$id == userID), \.$study.$id),
                from: table)
            // A therapist's account takes the notes they wrote with it.
            guard wholeAccount else { return }
            try await remove(PinnedNoteRecord.query(on: database).filter(\.$author.$id == userID), from: table)
        case AlertRecord.schema:
            try await remove(
                inStudy(AlertRecord.query(on: database).filter(\.$patient.$id == userID), \.$studyID), from: table)
        case RuleFiringRecord.schema:
            try await remove(
                inStudy(RuleFiringRecord.query(on: database).filter(\.$patient.$id == userID), \.$studyID), from: table)
        case DecisionPointRecord.schema:
            try await remove(
                inStudy(DecisionPointRecord.query(on: database).filter(\.$patient.$id == userID), \.$study.$id),
                from: table)
        case InterventionRecord.schema:
            try await remove(
                inStudy(InterventionRecord.query(on: database).filter(\.$patient.$id == userID), \.$study.$id),
                from: table)
        case MessageChoiceRecord.schema:
            try await remove(
                inStudy(MessageChoiceRecord.query(on: database).filter(\.$patient.$id == userID), \.$study.$id),
                from: table)
        case InterventionBackupRecord.schema:
            guard wholeAccount else { return }
            try await remove(InterventionBackupRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case NotificationRecord.schema:
            try await eraseNotifications(on: database)
        case DeviceRecord.schema:
            guard wholeAccount else { return }
            try await remove(DeviceRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case NotificationPreferenceRecord.schema:
            guard wholeAccount else { return }
            try await remove(
                NotificationPreferenceRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case ResponseRecord.schema:
            var query = ResponseRecord.query(on: database).filter(\.$patient.$id == userID)
            if let studyID {
                let prompts = try await studyPrompts(on: database)
                query = query.group(.or) {
                    $0.filter(\.$studyID == studyID).filter(\.$prompt.$id ~~ prompts.map(Optional.some))
                }
            }
            try await remove(query, from: table)
        case EntryRecord.schema:
            // The health record is the person's own, kept beside any study: it goes with the account.
            guard wholeAccount else { return }
            try await remove(EntryRecord.query(on: database).filter(\.$patient.$id == userID), from: table)
        case SampleRecord.schema:
            var query = SampleRecord.query(on: database).filter(\.$patient.$id == userID)
            if let studyID {
                // Samples of the types another of the person's studies asks for stay.
                let others = try await EnrollmentRecord.query(on: database).filter(\.$patient.$id == userID)
                    .filter(\.$status == EnrollmentStatus.active).filter(\.$study.$id != studyID).with(\.$study).all()
                let kept = Set(others.flatMap(\.study.recordSettings.samples.types))
                if !kept.isEmpty { query = query.filter(\.$type !~ Array(kept)) }
            }
            try await remove(query, from: table)
        case SampleChoiceRecord.schema:
            guard wholeAccount else { return }
            try await remove(SampleChoiceRecord.query(on: database).filter(\.$patient.$id == userID), from: table)
        case HealthImportRecord.schema:
            guard wholeAccount else { return }
            try await remove(HealthImportRecord.query(on: database).filter(\.$patient.$id == userID), from: table)
        case PromptRecord.schema:
            try await remove(PromptRecord.query(on: database).filter(\.$id ~~ studyPrompts(on: database)), from: table)
        case PlanAdjustmentRecord.schema:
            var query = PlanAdjustmentRecord.query(on: database).filter(\.$patient.$id == userID)
            if let studyID {
                let plans = try await PlanRecord.query(on: database).filter(\.$study.$id == studyID).all(\.$id)
                query = query.filter(\.$plan.$id ~~ plans)
            }
            try await remove(query, from: table)
        case PlanRecord.schema:
            // Plans made for this patient alone; their adjustments went with the patient's above.
            let own = try await inStudy(PlanRecord.query(on: database).filter(\.$patient.$id == userID), \.$study.$id)
                .all(\.$id)
            try await remove(
                PlanAdjustmentRecord.query(on: database).filter(\.$plan.$id ~~ own), from: PlanAdjustmentRecord.schema)
            try await remove(PlanRecord.query(on: database).filter(\.$id ~~ own), from: table)
        case AppointmentRecord.schema:
            guard wholeAccount || isPractice else { return }
            try await remove(AppointmentRecord.query(on: database).filter(\.$patient.$id == userID), from: table)
        case CalendarFeedRecord.schema:
            guard wholeAccount || isPractice else { return }
            try await remove(CalendarFeedRecord.query(on: database).filter(\.$patient.$id == userID), from: table)
        case SessionRecord.schema:
            guard wholeAccount else { return }
            try await remove(SessionRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case EmailTokenRecord.schema:
            guard wholeAccount else { return }
            let addresses = try await Self.addresses(of: userID, email: email, on: database)
            try await remove(EmailTokenRecord.query(on: database).filter(\.$user.$id == userID), from: table)
            // A therapist's invitation names the address it went to; it goes with the person it invited.
            guard mode == .erase else { return }
            try await remove(
                EmailTokenRecord.query(on: database).filter(\.$purpose == .invitation).filter(
                    \.$email ~~ Array(addresses)), from: table)
        case RateLimitEventRecord.schema:
            // Counts of failed attempts under keyed hashes: nothing to show, only to forget.
            guard wholeAccount, mode == .erase else { return }
            try await RateLimiter(database: database, services: services).forget([
                .account(email: email), .account(id: userID),
            ])
        case ConsentRecord.schema:
            try await remove(
                inStudy(ConsentRecord.query(on: database).filter(\.$user.$id == userID), \.$study.$id), from: table)
        case AllocationRecord.schema:
            let entries = inStudy(
                AllocationRecord.query(on: database).filter(\.$participantID == userID), \.$study.$id)
            guard mode == .erase else { return try await remove(entries, from: table) }
            // The log keeps its places, so later allocations still follow the design; they no longer name the person.
            try await entries.set(\.$participantID, to: tombstoneID).set(\.$levels, to: "{}").update()
        case EnrollmentRecord.schema:
            try await remove(
                inStudy(EnrollmentRecord.query(on: database).filter(\.$patient.$id == userID), \.$study.$id),
                from: table)
        case PairingCodeRecord.schema:
            try await remove(
                inStudy(PairingCodeRecord.query(on: database).filter(\.$redeemedBy.$id == userID), \.$study.$id),
                from: table)
        case PatientProfileRecord.schema:
            guard wholeAccount else { return }
            try await remove(PatientProfileRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case TherapistProfileRecord.schema:
            guard wholeAccount else { return }
            try await remove(TherapistProfileRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case StudyStaffRecord.schema:
            guard wholeAccount else { return }
            try await remove(StudyStaffRecord.query(on: database).filter(\.$user.$id == userID), from: table)
        case AuditEventRecord.schema:
            guard mode == .erase else {
                return try await remove(
                    AuditEventRecord.query(on: database).filter(\.$subjectID == userID), from: table)
            }
            try await repointAuditEvents(on: database)
        case UserRecord.schema:
            guard wholeAccount else { return }
            try await remove(UserRecord.query(on: database).filter(\.$id == userID), from: table)
        default:
            throw ErasureError.tableWithoutRule(table)
        }
    }

    /// Deletes what `query` finds and remembers the ids; collecting, keeps the rows instead.
    private mutating func remove<M: Model>(_ query: QueryBuilder<M>, from table: String) async throws
    where M.IDValue == UUID {
        switch mode {
        case .erase:
            let ids = try await query.all(\._$id)
            for batch in ids.batches() { try await M.query(on: query.database).filter(\._$id ~~ Array(batch)).delete() }
            removed[table, default: []] += ids
        case .collect:
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            for row in try await query.all() {
                guard let id = row.id, rows[table]?[id] == nil else { continue }
                rows[table, default: [:]][id] = try encoder.encode(row)
                removed[table, default: []].append(id)
            }
        }
    }

    /// The query narrowed to the erased study, when only a study's data goes.
    private func inStudy<M: Model, S: QueryableProperty>(_ query: QueryBuilder<M>, _ study: KeyPath<M, S>)
        -> QueryBuilder<M>
    where S.Model == M, S.Value == UUID {
        guard let studyID else { return query }
        return query.filter(study == studyID)
    }

    private func inStudy<M: Model, S: QueryableProperty>(_ query: QueryBuilder<M>, _ study: KeyPath<M, S>)
        -> QueryBuilder<M>
    where S.Model == M, S.Value == UUID? {
        guard let studyID else { return query }
        return query.filter(study == studyID)
    }

    /// The person's prompts, or those of the erased study.
    private func studyPrompts(on database: any Database) async throws -> [UUID] {
        try await inStudy(PromptRecord.query(on: database).filter(\.$patient.$id == userID), \.$study.$id).all(\._$id)
    }
}

extension ErasureRun {
    /// Answers kept for a repeated upload: all of the person's, or those that name what the study's erasure takes.
    private mutating func eraseSyncMutations(on database: any Database) async throws {
        var query = SyncMutationRecord.query(on: database).filter(\.$user.$id == userID)
        if studyID != nil {
            var named = Set(try await studyPrompts(on: database).map { $0.lowercasedText })
            for id in try await inStudy(ResponseRecord.query(on: database).filter(\.$patient.$id == userID), \.$studyID)
                .all(\._$id)
            {
                named.insert(id.lowercasedText)
            }
            for id in try await inStudy(
                InterventionRecord.query(on: database).filter(\.$patient.$id == userID), \.$study.$id
            ).all(\._$id) {
                named.insert(id.lowercasedText)
            }
            if isPractice {
                for id in try await AppointmentRecord.query(on: database).filter(\.$patient.$id == userID).all(\._$id) {
                    named.insert(id.lowercasedText)
                }
            }
            let hits = try await query.all().filter { mutation in
                let result = mutation.result.lowercased()
                return named.contains { result.contains($0) }
            }
            query = SyncMutationRecord.query(on: database).filter(\._$id ~~ hits.compactMap(\.id))
        }
        try await remove(query, from: SyncMutationRecord.schema)
    }

    /// The person's own notifications, and those sent to others about the person's prompts, appointments and
    /// alerts (a therapist's "look at this alert"), which would otherwise name records that no longer exist. For
    /// a study's erasure, those about the study's prompts and alerts.
    private mutating func eraseNotifications(on database: any Database) async throws {
        let prompts = try await studyPrompts(on: database)
        let appointments =
            wholeAccount || isPractice
            ? try await AppointmentRecord.query(on: database).filter(\.$patient.$id == userID).all(\._$id) : []
        let alerts = try await inStudy(AlertRecord.query(on: database).filter(\.$patient.$id == userID), \.$studyID)
            .all(\._$id)
        let wholeAccount = self.wholeAccount
        let userID = self.userID
        guard wholeAccount || !(prompts.isEmpty && appointments.isEmpty && alerts.isEmpty) else { return }
        let query = NotificationRecord.query(on: database).group(.or) { either in
            if wholeAccount { either.filter(\.$user.$id == userID) }
            if !prompts.isEmpty { either.filter(\.$promptID ~~ prompts.map(Optional.some)) }
            if !appointments.isEmpty { either.filter(\.$appointmentID ~~ appointments.map(Optional.some)) }
            for alert in alerts {
                either.filter(\.$dedupeKey, .contains(inverse: false, .prefix), "alert:\(alert.lowercasedText):")
            }
        }
        try await remove(query, from: NotificationRecord.schema)
    }

    /// The log of who looked at the person's data stays, pointing at the tombstone instead of the person and naming
    /// no record of theirs: `response:<id>` becomes `response:erased`. A study's erasure does this to the events
    /// that name the study or a record it took.
    private func repointAuditEvents(on database: any Database) async throws {
        let named = Set(removedIDs.map { $0.lowercasedText } + [studyID?.lowercasedText].compactMap { $0 })
        for event in try await AuditEventRecord.query(on: database).filter(\.$subjectID == userID).all() {
            if !wholeAccount {
                let target = event.target?.lowercased() ?? ""
                guard named.contains(where: { target.contains($0) }) else { continue }
            }
            event.subjectID = tombstoneID
            event.target = event.target.map(Self.withoutIDs)
            try await event.save(on: database)
        }
    }

    /// An audit target with every id in it replaced by `erased`.
    static func withoutIDs(_ target: String) -> String {
        target.split(separator: ":", omittingEmptySubsequences: false)
            .map { UUID(uuidString: String($0)) == nil ? String($0) : "erased" }
            .joined(separator: ":")
    }
}
