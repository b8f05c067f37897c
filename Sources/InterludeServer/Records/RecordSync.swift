import Fluent
import Foundation
import InterludeCore
import OpenAPIRuntime

/// Records in sync: a mutation names the kind and carries the body the kind's API takes, so every kind is
/// created, edited and deleted offline through the same steps as online.
extension RecordService {
    /// What became of a record mutation.
    enum SyncOutcome: Sendable, Equatable {
        case applied
        /// The record moved on to another version since the app's; nothing changed.
        case conflict
        /// The record is not there (any more).
        case gone
    }

    /// Creates a record from a mutation's body; a repeat of the same id is applied. A thought's occurrence finds
    /// or starts its thought by its words; a thought is never created on its own.
    func syncCreate(_ kind: RecordKind, id: UUID, body: Data, by patient: UserRecord) async throws -> SyncOutcome {
        switch kind.editing {
        case .whole(let type):
            return try await syncCreate(type, id: id, body: body, rules: try await rules(for: patient), by: patient)
        case .thought:
            throw AppError.field("recordKind", .notAllowed)
        case .thoughtOccurrence:
            let input = try Self.input(Components.Schemas.ThoughtOccurrenceInput.self, from: body, id: id)
            let entry: ThoughtEntry
            do {
                entry = try input.checked(now: services.clock.now)
            } catch let error as AppError {
                throw error.prefixed("record")
            }
            _ = try await thoughts.record(entry.text, entry.fields, id: id, thoughtID: entry.thoughtID, by: patient)
            return .applied
        }
    }

    private func syncCreate<Content: EditableRecordContent>(
        _ type: Content.Type, id: UUID, body: Data, rules: RecordRules, by patient: UserRecord
    ) async throws -> SyncOutcome {
        _ = try await create(try Self.content(type, from: body, id: id, rules: rules), id: id, by: patient)
        return .applied
    }

    /// Edits a record from the version the app had: a conflict when it moved on, gone when deleted meanwhile.
    func syncUpdate(_ kind: RecordKind, id: UUID, baseVersion: Int, body: Data, by patient: UserRecord) async throws
        -> SyncOutcome
    {
        switch kind.editing {
        case .whole(let type):
            return try await syncUpdate(
                type, id: id, baseVersion: baseVersion, body: body, rules: try await rules(for: patient), by: patient)
        case .thought:
            throw AppError.field("recordKind", .notAllowed)
        case .thoughtOccurrence:
            let fields: ThoughtOccurrence.Fields
            do {
                fields = try Self.input(Components.Schemas.ThoughtOccurrenceUpdate.self, from: body, id: nil).checked(
                    now: services.clock.now)
            } catch let failure as ValidationFailure {
                throw failure.appError.prefixed("record")
            }
            return try await outcome {
                _ = try await thoughts.update(id, fields, baseVersion: baseVersion, by: patient)
            }
        }
    }

    private func syncUpdate<Content: EditableRecordContent>(
        _ type: Content.Type, id: UUID, baseVersion: Int, body: Data, rules: RecordRules, by patient: UserRecord
    ) async throws -> SyncOutcome {
        let content = try Self.content(type, from: body, id: id, rules: rules)
        return try await outcome { _ = try await update(content, id: id, baseVersion: baseVersion, by: patient) }
    }

    /// Deletes a record from the version the app had; one gone already is what the change wanted.
    func syncDelete(_ kind: RecordKind, id: UUID, baseVersion: Int, by patient: UserRecord) async throws -> SyncOutcome
    {
        let result = try await outcome {
            if kind == .thought {
                try await thoughts.delete(id, baseVersion: baseVersion, by: patient)
            } else {
                try await delete(id, kind: kind, baseVersion: baseVersion, by: patient)
            }
        }
        return result == .gone ? .applied : result
    }

    private func outcome(_ change: () async throws -> Void) async throws -> SyncOutcome {
        do {
            try await change()
            return .applied
        } catch AppError.conflict(.recordChanged) {
            return .conflict
        } catch AppError.notFound {
            return .gone
        }
    }

    var thoughts: ThoughtService { ThoughtService(database: database, services: services) }

    /// A record as its kind's API shows it, for sync answers; nil when the patient has no such record.
    func shown(_ id: UUID, of patient: UserRecord) async throws -> (kind: RecordKind, body: OpenAPIObjectContainer)? {
        guard let record = try await EntryRecord.find(id, on: database), record.$patient.id == patient.id else {
            return nil
        }
        return (record.kind, try shown(record, today: LocalDate(services.clock.now, in: patient.zone)))
    }

    func shown(_ record: EntryRecord, today: LocalDate) throws -> OpenAPIObjectContainer {
        try shown(record.kind.content, record, today: today)
    }

    private func shown<Content: RecordKindContent>(_ type: Content.Type, _ record: EntryRecord, today: LocalDate) throws
        -> OpenAPIObjectContainer
    {
        let stored: Stored<Content> = try open(record)
        let data = try APIJSON.encoder.encode(try Content.shown(stored, today: today))
        return try JSONDecoder().decode(OpenAPIObjectContainer.self, from: data)
    }

    /// The content of a mutation's body, read as the kind's API body (its `id` the record's) and checked.
    private static func content<Content: EditableRecordContent>(
        _ type: Content.Type, from body: Data, id: UUID, rules: RecordRules
    )
        throws -> Content
    {
        let input = try input(Content.Input.self, from: body, id: id)
        do {
            return try Content.validate(input, rules: rules)
        } catch let failure as ValidationFailure {
            throw failure.appError.prefixed("record")
        }
    }

    /// A mutation's body read as an API body; `id`, when given, is the record's.
    private static func input<Input: Decodable>(_ type: Input.Type, from body: Data, id: UUID?) throws -> Input {
        guard var object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw AppError.field("record", .invalidValue)
        }
        if let id { object["id"] = id.uuidString }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try APIDateTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
        }
        do {
            return try decoder.decode(Input.self, from: try JSONSerialization.data(withJSONObject: object))
        } catch let error as DecodingError {
            throw ProblemMiddleware.map(error).prefixed("record")
        } catch AppError.invalidDateTime {
            throw AppError.field("record", .invalidFormat)
        }
    }
}
