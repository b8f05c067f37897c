import FluentKit
import Foundation
import InterludeCore
import SQLKit

extension Statements {
    /// Stores a submitted response and marks its prompt completed, stamped for sync as a save through its model would
    /// be (see `SyncStamps`): every submission runs both. Call inside a transaction.
    static func storeSubmission(
        _ response: ResponseRecord, id: UUID, promptID: UUID, at now: Date, on database: any Database
    ) async throws {
        let sql = sql(database)
        try await sql.raw(
            """
            INSERT INTO responses (id, patient_id, prompt_id, study_id, instrument_key, instrument_version, \
            answers, scores, context, item_times, quality, opened_at, started_at, completed_at, received_at) VALUES (\
            \(bind: id), \(bind: response.$patient.id), \(bind: promptID), \(bind: response.studyID), \
            \(bind: response.instrumentKey), \(bind: response.instrumentVersion), \(bind: response.answers), \
            \(bind: response.scores), \(bind: response.context), \(bind: response.itemTimes), \(bind: response.quality), \
            \(bind: response.openedAt), \(bind: response.startedAt), \
            \(bind: response.completedAt), \(bind: response.receivedAt))
            """
        ).run()
        try await sql.raw(
            """
            UPDATE prompts SET status = \(bind: PromptStatus.completed.rawValue), \
            completed_at = \(bind: response.completedAt), response_id = \(bind: id), \
            changed_at = \(bind: now) WHERE id = \(bind: promptID)
            """
        ).run()
    }

    /// What decides whether a patient's one-time questionnaires are open: their study, recorded status and window.
    struct OneTimePrompt {
        let studyID: UUID
        let status: PromptStatus
        let opensAt: Date
        let closesAt: Date
    }

    /// The patient's one-time prompts of studies, only what decides: every submission asks.
    static func oneTimePrompts(of patientID: UUID, on database: any Database) async throws -> [OneTimePrompt] {
        try await sql(database).raw(
            """
            SELECT study_id, status, opens_at, closes_at FROM prompts WHERE patient_id = \(bind: patientID) \
            AND occurrence = 'once' AND study_id IS NOT NULL
            """
        ).all().map { row in
            OneTimePrompt(
                studyID: try row.decode(column: "study_id", as: UUID.self),
                status: try row.decodeName(column: "status", as: PromptStatus.self),
                opensAt: try row.decode(column: "opens_at", as: Date.self),
                closesAt: try row.decode(column: "closes_at", as: Date.self))
        }
    }
}
