import Fluent
import Foundation
import InterludeCore

/// Who may change which instrument. The shipped library is read-only, so its crisis items stay. An imported
/// instrument belongs to the study (or practice) it was imported for: staff there with `manageInstruments` import
/// new versions and publish them, and may share it with every study. Once shared (or when it belongs to no study),
/// a new version reaches other studies' patients, so only an administrator publishes it. Every import, publication
/// and sharing is audited.
struct InstrumentGovernance: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    private var studies: StudyAccess { StudyAccess(database: database, services: services) }
    private var catalog: InstrumentCatalog { InstrumentCatalog(database: database, services: services) }

    /// Imports a draft of `definition` for `studyID` (an administrator may import for no study: an instrument of
    /// the whole installation, shared at once).
    func importDraft(
        _ definition: InstrumentDefinition, format: InstrumentCatalog.Format, for studyID: UUID?, by user: UserRecord
    ) async throws -> InstrumentVersionRecord {
        let existing = try await catalog.versions(of: definition.key).first
        if existing?.origin == .library { throw AppError.forbidden(.builtInInstrument) }
        try await requireImporter(for: studyID, by: user)
        if let existing, existing.$ownerStudy.id != studyID { throw AppError.conflict(.instrumentKeyTaken) }
        let record = try await catalog.importDraft(
            definition, format: format, owner: studyID, shared: existing?.shared ?? (studyID == nil), by: user)
        try await audit(.instrumentImported, record, by: user)
        return record
    }

    /// Imports every instrument of an uploaded file as a draft (published at once with `publish`): all of them or,
    /// when one is refused, none.
    func importUpload(_ upload: InstrumentCatalog.Upload, for studyID: UUID?, publish: Bool, by user: UserRecord)
        async throws -> [InstrumentVersionRecord]
    {
        let services = services
        return try await database.atomically { transaction in
            let governance = InstrumentGovernance(database: transaction, services: services)
            var records: [InstrumentVersionRecord] = []
            for definition in upload.definitions {
                var record = try await governance.importDraft(
                    definition, format: upload.format, for: studyID, by: user)
                if publish { record = try await governance.publish(record.key, record.version, by: user) }
                records.append(record)
            }
            return records
        }
    }

    /// Throws unless the user may import instruments for `studyID` (for no study: an administrator). Asked before an
    /// upload is read, so nobody else makes the server read a file.
    func requireImporter(for studyID: UUID?, by user: UserRecord) async throws {
        if let studyID {
            _ = try await studies.require(.manageInstruments, in: studyID, by: user)
        } else if user.role != .admin {
            throw AppError.field("studyId", .required)
        }
    }

    /// Publishes a draft version.
    func publish(_ key: String, _ version: Int, by user: UserRecord) async throws -> InstrumentVersionRecord {
        guard let record = try await catalog.version(key, version) else { throw AppError.notFound }
        try await requireSteward(of: record, by: user)
        let published = try await catalog.publish(record)
        try await audit(.instrumentPublished, published, by: user)
        return published
    }

    /// Offers every version of an instrument to all studies. Only an administrator takes it back (the studies that
    /// use it keep it meanwhile), so sharing is the owner's one-way decision.
    func share(_ key: String, by user: UserRecord) async throws -> InstrumentVersionRecord {
        guard let newest = try await catalog.versions(of: key).first else { throw AppError.notFound }
        try await requireSteward(of: newest, by: user)
        try await catalog.share(key)
        try await audit(.instrumentShared, newest, by: user)
        return try await catalog.versions(of: key).first ?? newest
    }

    /// Moves a study to another published version of an instrument it may use; its next prompts use that version,
    /// prompts already planned keep theirs.
    func movePin(_ key: String, to version: Int, in studyID: UUID, by user: UserRecord) async throws -> PinnedVersion {
        let grant = try await studies.require(.manageInstruments, in: studyID, by: user)
        guard let record = try await catalog.version(key, version), record.isUsable(in: studyID) else {
            throw AppError.notFound
        }
        guard record.isPublished else { throw AppError.field("version", .invalidValue) }
        let pin = try await catalog.movePin(key, to: version, in: studyID)
        try await grant.record(.instrumentPinMoved, target: "instrument:\(key):\(version)")
        return try await pinned(pin, in: studyID)
    }

    /// A study's pin with the newest published version it could move to.
    typealias PinnedVersion = (pin: InstrumentPinRecord, newest: Int)

    /// The versions `studyID` has pinned, each with the newest published version it could move to.
    func pins(in studyID: UUID, by user: UserRecord) async throws -> [PinnedVersion] {
        _ = try await studies.require(.viewStudy, in: studyID, by: user)
        var result: [PinnedVersion] = []
        for pin in try await catalog.pins(in: studyID) { result.append(try await pinned(pin, in: studyID)) }
        return result
    }

    private func pinned(_ pin: InstrumentPinRecord, in studyID: UUID) async throws -> PinnedVersion {
        let newest = try await catalog.latestPublished(pin.instrumentKey, usableIn: studyID)?.version ?? pin.version
        return (pin, max(newest, pin.version))
    }

    /// Whether `user` may publish versions of the instrument `record` belongs to.
    func isSteward(of record: InstrumentVersionRecord, _ user: UserRecord) async -> Bool {
        (try? await requireSteward(of: record, by: user)) != nil
    }

    /// The instruments `user` may see: those every study may use, and unshared imports of the studies and practices
    /// the user works in; an administrator sees all. Another study's unshared instrument stays its own.
    func visible(_ records: [InstrumentVersionRecord], to user: UserRecord) async throws -> [InstrumentVersionRecord] {
        if user.role == .admin { return records }
        var own: Set<UUID> = []
        for kind in StudyKind.allCases {
            own.formUnion(try await studies.studies(where: .viewStudy, for: user, kind: kind).compactMap(\.id))
        }
        return records.filter { $0.isUsable(in: nil) || $0.$ownerStudy.id.map(own.contains) == true }
    }

    /// One version, when `user` may see it (see `visible(_:to:)`).
    func visibleVersion(_ key: String, _ version: Int, to user: UserRecord) async throws -> InstrumentVersionRecord? {
        guard let record = try await catalog.version(key, version) else { return nil }
        return try await visible([record], to: user).first
    }

    /// The studies and practices `user` may import instruments for, newest first.
    func studies(for user: UserRecord) async throws -> [StudyRecord] {
        var result: [StudyRecord] = []
        for kind in StudyKind.allCases {
            result += try await studies.studies(where: .manageInstruments, for: user, kind: kind)
        }
        return result
    }

    /// Built-in: nobody. Shared or without owner: an administrator. Otherwise staff of the owner with
    /// `manageInstruments`.
    private func requireSteward(of record: InstrumentVersionRecord, by user: UserRecord) async throws {
        if record.origin == .library { throw AppError.forbidden(.builtInInstrument) }
        if user.role == .admin { return }
        guard let owner = record.$ownerStudy.id else { throw AppError.forbidden(.notAllowed) }
        _ = try await studies.require(.manageInstruments, in: owner, by: user)
        if record.shared { throw AppError.forbidden(.notAllowed) }
    }

    private func audit(_ action: AuditAction, _ record: InstrumentVersionRecord, by user: UserRecord) async throws {
        let target = "instrument:\(record.key):\(record.version)"
        try await AuditLog(database: database, services: services).record(actor: user, action: action, target: target)
    }
}
