import Foundation
import InterludeCore

/// The steps every record kind's patient operations share: the patient, the id from the body or the path, the
/// service call. Each kind's handlers only check their content and encode the answer.
extension APIContext {
    var records: RecordService { RecordService(database: database, services: services) }

    /// Creates a record under the id the app sent; `created` is false for a repeat.
    func createRecord<Content: RecordContent>(_ content: Content, id rawID: String, by patient: UserRecord) async throws
        -> (stored: RecordService.Stored<Content>, created: Bool)
    {
        guard let id = UUID(uuidString: rawID) else { throw AppError.field("id", .invalidFormat) }
        return try await records.create(content, id: id, by: patient)
    }

    func updateRecord<Content: RecordContent>(
        _ content: Content, id rawID: String, baseVersion: Int, by patient: UserRecord
    )
        async throws -> RecordService.Stored<Content>
    {
        try await records.update(content, id: try pathID(rawID), baseVersion: baseVersion, by: patient)
    }

    func deleteRecord(_ kind: RecordKind, id rawID: String, baseVersion: Int) async throws {
        try await records.delete(try pathID(rawID), kind: kind, baseVersion: baseVersion, by: try await user(.patient))
    }
}
