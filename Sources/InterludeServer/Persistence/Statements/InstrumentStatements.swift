import FluentKit
import Foundation
import SQLKit

extension Statements {
    /// Pins `version` of `key` for a study unless the study has a pin for it already; the database's uniqueness
    /// decides races.
    static func insertPin(_ key: String, version: Int, in studyID: UUID, at now: Date, on database: any Database)
        async throws
    {
        try await sql(database).insert(into: InstrumentPinRecord.schema)
            .columns("id", "study_id", "instrument_key", "version", "pinned_at")
            .values(SQLBind(UUID()), SQLBind(studyID), SQLBind(key), SQLBind(version), SQLBind(now))
            .ignoringConflicts().run()
    }

    /// Points a study's pin of `key` at `version`; of parallel moves the last one stays.
    static func movePin(_ key: String, to version: Int, in studyID: UUID, at now: Date, on database: any Database)
        async throws
    {
        try await sql(database).update(InstrumentPinRecord.schema)
            .set("version", to: SQLBind(version)).set("pinned_at", to: SQLBind(now))
            .where("study_id", .equal, SQLBind(studyID)).where("instrument_key", .equal, SQLBind(key)).run()
    }
}
