import Fluent
import Foundation
import InterludeCore

/// Keeps the encrypted backup of a patient's intervention answers. The device encrypts with a key derived from
/// a passphrase only the patient knows; the server checks the envelope's shape and stores it, and cannot read it.
struct BackupService: Sendable {
    let database: any Database
    let services: AppServices

    /// What a device sends: how the key was derived and the sealed answers, all base64.
    struct Envelope: Codable, Sendable, Equatable {
        var algorithm: String
        var iterations: Int
        var salt: String
        var nonce: String
        var ciphertext: String
    }

    static let algorithm = "PBKDF2-SHA256+AES-256-GCM"
    static let leastIterations = 600_000
    static let mostIterations = 10_000_000
    /// Base64 characters of ciphertext: about 3 MB of answers.
    static let mostCiphertext = 4_000_000

    struct Stored: Sendable {
        let envelope: Envelope
        let version: Int
        let updatedAt: Date
    }

    func backup(of patient: UserRecord) async throws -> Stored? {
        try await InterventionBackupRecord.query(on: database).filter(\.$user.$id == patient.requireID()).first().map(
            open)
    }

    /// Replaces the backup when `baseVersion` is the stored one (0: there is none yet); otherwise refuses, so a
    /// device never overwrites answers another device saved meanwhile.
    func store(_ envelope: Envelope, baseVersion: Int, for patient: UserRecord) async throws -> Stored {
        guard patient.role == .patient else { throw AppError.forbidden(.notAllowed) }
        try Self.check(envelope)
        let patientID = try patient.requireID()
        let now = services.clock.now
        let existing = try await InterventionBackupRecord.query(on: database).filter(\.$user.$id == patientID).first()
        guard (existing?.version ?? 0) == baseVersion else { throw AppError.conflict(.backupOutdated) }
        let record = existing ?? InterventionBackupRecord()
        record.$user.id = patientID
        record.version = baseVersion + 1
        record.updatedAt = now
        record.envelope = String(decoding: try JSONEncoder().encode(envelope), as: UTF8.self)
        do {
            try await record.save(on: database)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.backupOutdated)
        }
        return try open(record)
    }

    static func check(_ envelope: Envelope) throws {
        var validator = FieldValidator()
        if envelope.algorithm != algorithm { validator.add("envelope.algorithm", .notAllowed) }
        if envelope.iterations < leastIterations || envelope.iterations > mostIterations {
            validator.add("envelope.iterations", .outOfRange, limit: leastIterations)
        }
        for (field, value, bytes) in [
            ("envelope.salt", envelope.salt, 16...64), ("envelope.nonce", envelope.nonce, 12...12),
            ("envelope.ciphertext", envelope.ciphertext, 17...(mostCiphertext / 4 * 3)),
        ] {
            if value.count > mostCiphertext {
                validator.add(field, .tooLong, limit: mostCiphertext)
            } else if let data = Data(base64Encoded: value), bytes.contains(data.count) {
                continue
            } else {
                validator.add(field, .invalidFormat)
            }
        }
        try validator.check()
    }

    private func open(_ record: InterventionBackupRecord) throws -> Stored {
        Stored(
            envelope: try JSONDecoder().decode(Envelope.self, from: Data(record.envelope.utf8)),
            version: record.version,
            updatedAt: record.updatedAt)
    }
}
