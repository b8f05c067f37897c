import Fluent
import SQLKit

/// Indexes for the look-ups that name one person: without them each read every row of its table. The dispatcher
/// reads the devices of every round's people, each study submission the person's consents and enrollment, the
/// notification history a person's notifications, which grow by every one ever sent.
struct CreatePersonLookupIndexes: AsyncMigration {
    static let indexes: [(name: String, table: String, columns: [String])] = [
        ("devices_user", DeviceRecord.schema, ["user_id"]),
        ("consents_user_study", ConsentRecord.schema, ["user_id", "study_id"]),
        ("enrollments_patient_study", EnrollmentRecord.schema, ["patient_id", "study_id"]),
        ("notifications_user_due", NotificationRecord.schema, ["user_id", "due_at"]),
    ]

    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        for index in Self.indexes {
            let builder = sql.create(index: index.name).on(index.table)
            for column in index.columns { builder.column(column) }
            try await builder.run()
        }
    }

    func revert(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        for index in Self.indexes { try await sql.drop(index: index.name).run() }
    }
}
