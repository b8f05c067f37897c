import Fluent
import SQLKit

/// A patient is paired with one therapist at a time and belongs to a study (or waits to) once, held by the
/// database: two codes redeemed at once, or two join requests, cannot both succeed. Duplicates made before this rule
/// existed are resolved first: the earliest stays, the later ones end.
struct UpdateEnrollmentsUniqueCurrent: AsyncMigration {
    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.raw(
            """
            UPDATE enrollments SET status = 'ended'
            WHERE therapist_id IS NOT NULL AND status = 'active' AND EXISTS (
                SELECT 1 FROM enrollments AS earlier
                WHERE earlier.patient_id = enrollments.patient_id AND earlier.therapist_id IS NOT NULL
                AND earlier.status = 'active'
                AND (earlier.created_at < enrollments.created_at
                    OR (earlier.created_at = enrollments.created_at AND earlier.id < enrollments.id)))
            """
        ).run()
        try await sql.raw(
            """
            UPDATE enrollments SET status = 'ended'
            WHERE status IN ('requested', 'active') AND EXISTS (
                SELECT 1 FROM enrollments AS earlier
                WHERE earlier.patient_id = enrollments.patient_id AND earlier.study_id = enrollments.study_id
                AND earlier.status IN ('requested', 'active')
                AND (earlier.created_at < enrollments.created_at
                    OR (earlier.created_at = enrollments.created_at AND earlier.id < enrollments.id)))
            """
        ).run()
        try await sql.raw(
            """
            CREATE UNIQUE INDEX enrollments_one_practice ON enrollments (patient_id)
            WHERE therapist_id IS NOT NULL AND status = 'active'
            """
        ).run()
        try await sql.raw(
            """
            CREATE UNIQUE INDEX enrollments_one_current ON enrollments (study_id, patient_id)
            WHERE status IN ('requested', 'active')
            """
        ).run()
    }

    func revert(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.drop(index: "enrollments_one_current").run()
        try await sql.drop(index: "enrollments_one_practice").run()
    }
}
