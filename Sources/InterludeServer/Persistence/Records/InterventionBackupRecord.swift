import Fluent
import Foundation

/// The ciphertext of a patient's intervention answers, encrypted on their device with a key only they know.
final class InterventionBackupRecord: Model, @unchecked Sendable {
    static let schema = "intervention_backups"

    @ID(key: .id) var id: UUID?
    @Field(key: "updated_at") var updatedAt: Date
    @Parent(key: "user_id") var user: UserRecord
    /// Counts every replacement, so a device does not overwrite a newer backup unknowingly.
    @Field(key: "version") var version: Int
    /// The envelope as the device sent it: algorithm parameters, salt, nonce and ciphertext, all opaque here.
    @Field(key: "envelope") var envelope: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $updatedAt, $user, $version, $envelope] }

    init() {}
}
