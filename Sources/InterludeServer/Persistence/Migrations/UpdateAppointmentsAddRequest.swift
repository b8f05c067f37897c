import Fluent

/// A patient's request to move or cancel a session their therapist booked, waiting for the therapist's decision.
struct UpdateAppointmentsAddRequest: AsyncMigration {
    private static let fields: [(FieldKey, DatabaseSchema.DataType)] = [
        ("request_kind", .string), ("request_starts_at", .datetime), ("request_ends_at", .datetime),
        ("request_note", .string), ("requested_at", .datetime),
    ]

    /// One column at a time: SQLite adds one per statement.
    func prepare(on database: any Database) async throws {
        for (key, type) in Self.fields {
            try await database.schema(AppointmentRecord.schema).field(key, type).update()
        }
    }

    func revert(on database: any Database) async throws {
        for (key, _) in Self.fields {
            try await database.schema(AppointmentRecord.schema).deleteField(key).update()
        }
    }
}
