import Fluent
import Foundation
import SQLKit

/// One pinned version per study and instrument. Studies that used instruments before pins existed keep the newest
/// version their prompts already use.
struct CreateInstrumentPins: AsyncMigration {
    let clock: WallClock

    func prepare(on database: any Database) async throws {
        try await database.schema(InstrumentPinRecord.schema)
            .id()
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id", onDelete: .cascade))
            .field("instrument_key", .string, .required)
            .field("version", .int, .required)
            .field("pinned_at", .datetime, .required)
            .unique(on: "study_id", "instrument_key")
            .create()
        let sql = database as! any SQLDatabase
        let used = try await sql.raw(
            """
            SELECT study_id, instrument_key, MAX(instrument_version) AS version FROM prompts
            WHERE study_id IS NOT NULL AND instrument_version > 0 GROUP BY study_id, instrument_key
            """
        ).all()
        let now = clock.now
        for row in used {
            let pin = InstrumentPinRecord()
            pin.$study.id = try row.decode(column: "study_id", as: UUID.self)
            pin.instrumentKey = try row.decode(column: "instrument_key", as: String.self)
            pin.version = try row.decode(column: "version", as: Int.self)
            pin.pinnedAt = now
            try await pin.create(on: database)
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema(InstrumentPinRecord.schema).delete()
    }
}
