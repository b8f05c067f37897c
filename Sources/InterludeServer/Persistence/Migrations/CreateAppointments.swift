import Fluent
import SQLKit

struct CreateAppointments: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(AppointmentRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("version", .int, .required)
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("created_by", .uuid, .references(UserRecord.schema, "id"))
            .field("title", .string, .required)
            .field("comment", .string)
            .field("starts_at", .datetime, .required)
            .field("ends_at", .datetime, .required)
            .field("time_zone", .string, .required)
            .create()
        try await (database as! any SQLDatabase)
            .create(index: "appointments_patient_start")
            .on(AppointmentRecord.schema)
            .column("patient_id").column("starts_at")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(AppointmentRecord.schema).delete()
    }
}
