import Fluent
import InterludeCore
import SQLKit

/// When an enrolment began taking part (joining, or the approval of a request) and when it ended (the treatment
/// ended, or the person left): what staff may read of the person, and what an export holds, lies between the two.
/// Enrolments from before count from their creation, and those that ended from their last change.
struct UpdateEnrollmentsAddPeriod: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // One column per statement: SQLite adds one at a time.
        try await database.schema(EnrollmentRecord.schema).field("started_at", .datetime).update()
        try await database.schema(EnrollmentRecord.schema).field("ended_at", .datetime).update()
        guard let sql = database as? any SQLDatabase else { return }
        let begun = [EnrollmentStatus.active, .ended, .withdrawn].map { SQLBind($0.rawValue) }
        try await sql.update(EnrollmentRecord.schema).set("started_at", to: SQLIdentifier("created_at"))
            .where("status", .in, SQLGroupExpression(begun)).run()
        let over = [EnrollmentStatus.ended, .withdrawn].map { SQLBind($0.rawValue) }
        try await sql.update(EnrollmentRecord.schema).set("ended_at", to: SQLIdentifier("updated_at"))
            .where("status", .in, SQLGroupExpression(over)).run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EnrollmentRecord.schema).deleteField("ended_at").update()
        try await database.schema(EnrollmentRecord.schema).deleteField("started_at").update()
    }
}
