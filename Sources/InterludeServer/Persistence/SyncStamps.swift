import Fluent
import Foundation
import InterludeCore

/// Marks changes for apps that sync: a prompt saved through its model gets `changed_at`; a prompt or
/// appointment deleted through its model leaves a tombstone for its person. Statements written out elsewhere
/// (the planner, a submission) stamp and bury their rows themselves.
struct SyncStamps {
    static func bury(_ entity: SyncEntity, ids: [UUID], of userID: UUID, now: Date, on database: any Database)
        async throws
    {
        guard !ids.isEmpty else { return }
        try await ids.map { SyncTombstoneRecord(userID: userID, entity: entity, entityID: $0, deletedAt: now) }
            .create(on: database)
    }

    struct Prompts: AsyncModelMiddleware {
        let clock: WallClock

        func create(model: PromptRecord, on db: any Database, next: any AnyAsyncModelResponder) async throws {
            model.changedAt = clock.now
            try await next.create(model, on: db)
        }

        func update(model: PromptRecord, on db: any Database, next: any AnyAsyncModelResponder) async throws {
            model.changedAt = clock.now
            try await next.update(model, on: db)
        }

        func delete(model: PromptRecord, force: Bool, on db: any Database, next: any AnyAsyncModelResponder)
            async throws
        {
            try await next.delete(model, force: force, on: db)
            try await SyncStamps.bury(.prompt, ids: [model.requireID()], of: model.$patient.id, now: clock.now, on: db)
        }
    }

    struct Appointments: AsyncModelMiddleware {
        let clock: WallClock

        func delete(model: AppointmentRecord, force: Bool, on db: any Database, next: any AnyAsyncModelResponder)
            async throws
        {
            try await next.delete(model, force: force, on: db)
            try await SyncStamps.bury(
                .appointment, ids: [model.requireID()], of: model.$patient.id, now: clock.now, on: db)
        }
    }
}

/// What apps sync.
enum SyncEntity: String, Sendable, Codable {
    case prompt
    case appointment
    case event
    case therapy
    case audiogram
    case mood
    case thought
    case thoughtOccurrence

    /// The entity a record kind's deletions are announced under.
    init(_ kind: RecordKind) {
        switch kind {
        case .event: self = .event
        case .therapy: self = .therapy
        case .audiogram: self = .audiogram
        case .mood: self = .mood
        case .thought: self = .thought
        case .thoughtOccurrence: self = .thoughtOccurrence
        }
    }
}
