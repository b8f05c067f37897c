import FluentKit
import Foundation
import InterludeCore
import SQLKit

/// What a submission needs of its prompt, read without a model: every submission reads one, and a prompt's model has
/// nineteen fields to build, fill and free.
struct SubmittedPrompt: Sendable {
    let patientID: UUID
    let studyID: UUID?
    let instrumentKey: String
    let instrumentVersion: Int
    let status: PromptStatus
    let responseID: UUID?
    let occurrence: String?
    let opensAt: Date
    let closesAt: Date
    let openedAt: Date?

    static func read(_ id: UUID, on database: any Database) async throws -> SubmittedPrompt? {
        guard
            let row = try await Statements.sql(database).raw(
                """
                SELECT patient_id, study_id, instrument_key, instrument_version, status, response_id, occurrence, \
                opens_at, closes_at, opened_at FROM prompts WHERE id = \(bind: id)
                """
            ).first()
        else { return nil }
        return SubmittedPrompt(
            patientID: try row.decode(column: "patient_id", as: UUID.self),
            studyID: try row.decodeOptional(column: "study_id", as: UUID.self),
            instrumentKey: try row.decode(column: "instrument_key", as: String.self),
            instrumentVersion: try row.decode(column: "instrument_version", as: Int.self),
            status: try row.decodeName(column: "status", as: PromptStatus.self),
            responseID: try row.decodeOptional(column: "response_id", as: UUID.self),
            occurrence: try row.decodeOptional(column: "occurrence", as: String.self),
            opensAt: try row.decode(column: "opens_at", as: Date.self),
            closesAt: try row.decode(column: "closes_at", as: Date.self),
            openedAt: try row.decodeOptional(column: "opened_at", as: Date.self))
    }
}
