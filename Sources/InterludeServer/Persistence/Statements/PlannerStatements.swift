import FluentKit
import Foundation
import InterludeCore
import SQLKit

extension Statements {
    /// On PostgreSQL, takes the advisory lock `lockClass` of this schema for the running transaction unless another
    /// process holds it. The lock belongs to the schema, so installations (and test runs) in other schemas of the same
    /// database never wait for each other.
    static func tryAdvisoryLock(_ lockClass: Int32, on transaction: any Database) async throws -> Bool {
        let row = try await sql(transaction)
            .raw("SELECT pg_try_advisory_xact_lock(\(bind: lockClass), hashtext(current_schema())) AS locked").first()
        return try row?.decode(column: "locked", as: Bool.self) == true
    }

    /// A prompt a plan schedules.
    struct ScheduledPrompt {
        let patientID: UUID
        let studyID: UUID
        let instrumentKey: String
        let instrumentVersion: Int
        let opensAt: Date
        let closesAt: Date
        let planID: UUID
        let occurrence: String
    }

    /// Inserts scheduled prompts in one statement, skipping any another run already made; the number inserted.
    static func insertScheduledPrompts(_ prompts: [ScheduledPrompt], at now: Date, on database: any Database)
        async throws -> Int
    {
        guard !prompts.isEmpty else { return 0 }
        var builder = sql(database).insert(into: PromptRecord.schema).columns(
            "id", "created_at", "patient_id", "study_id", "instrument_key", "instrument_version", "opens_at",
            "closes_at",
            "status", "source", "plan_id", "occurrence", "changed_at")
        for prompt in prompts {
            builder = builder.values([
                SQLBind(UUID()), SQLBind(now), SQLBind(prompt.patientID), SQLBind(prompt.studyID),
                SQLBind(prompt.instrumentKey), SQLBind(prompt.instrumentVersion), SQLBind(prompt.opensAt),
                SQLBind(prompt.closesAt), SQLBind(PromptStatus.scheduled), SQLBind(PromptSource.schedule),
                SQLBind(prompt.planID), SQLBind(prompt.occurrence), SQLBind(now),
            ])
        }
        return try await builder.ignoringConflicts().returning("id").all().count
    }
}
