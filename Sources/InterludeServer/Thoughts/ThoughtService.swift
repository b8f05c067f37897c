import Fluent
import Foundation
import InterludeCore
import SQLKit

/// A person's difficult thoughts and each time one came back, kept as records: an occurrence names its thought by
/// the words, and the same words (whatever their case, spacing or Unicode form) find the thought they started,
/// through a keyed hash so the words stay sealed. A therapist may add thoughts as examples; deleting a thought
/// deletes its occurrences.
struct ThoughtService: Sendable {
    let database: any Database
    let services: AppServices

    private var records: RecordService { RecordService(database: database, services: services) }
    private var now: Date { services.clock.now }

    /// A thought with its occurrences, newest first.
    struct Listed: Sendable {
        let thought: RecordService.Stored<Thought>
        let occurrences: [RecordService.Stored<ThoughtOccurrence>]

        var id: UUID { thought.record.id! }
        var addedAt: Date { thought.record.occurredAt }
    }

    /// What to list: words the thought contains, and days it was added or came back on (the occurrences shown
    /// are then those days' only).
    struct Filter: Sendable {
        var words: String?
        var from: LocalDate?
        var to: LocalDate?
        /// The zone the days are the person's days in.
        var zone: TimeZone = .gmt

        static let all = Filter()

        var limitsDays: Bool { from != nil || to != nil }

        func contains(_ moment: Date) -> Bool {
            let day = LocalDate(moment, in: zone)
            return (from.map { day >= $0 } ?? true) && (to.map { day <= $0 } ?? true)
        }
    }

    /// The person's thoughts, newest first, each with its occurrences.
    func thoughts(of patientID: UUID, filter: Filter = .all) async throws -> [Listed] {
        let occurrences = Dictionary(
            grouping: try await records.list(ThoughtOccurrence.self, of: patientID), by: \.content.thoughtID)
        let words = filter.words.map(Thought.matchKey).flatMap { $0.isEmpty ? nil : $0 }
        return try await records.list(Thought.self, of: patientID).sorted(by: Self.newestFirst).compactMap { thought in
            if let words, !Thought.matchKey(thought.content.text).contains(words) { return nil }
            var own = occurrences[try thought.record.requireID()] ?? []
            if filter.limitsDays {
                own = own.filter { filter.contains($0.content.recordedAt) }
                guard !own.isEmpty || filter.contains(thought.content.addedAt) else { return nil }
            }
            return Listed(thought: thought, occurrences: own)
        }
    }

    private static func newestFirst(_ left: RecordService.Stored<Thought>, _ right: RecordService.Stored<Thought>)
        -> Bool
    {
        let (a, b) = (left.record, right.record)
        return a.occurredAt != b.occurredAt ? a.occurredAt > b.occurredAt : a.id!.lowercasedText > b.id!.lowercasedText
    }

    /// Records one time a thought came back under the occurrence's id, with the thought its words find or a new
    /// one (under `thoughtID` when the app chose one). The same occurrence sent again answers the first
    /// (`created` false).
    func record(
        _ text: String, _ fields: ThoughtOccurrence.Fields, id: UUID, thoughtID: UUID?, by patient: UserRecord
    ) async throws -> (
        thought: RecordService.Stored<Thought>, occurrence: RecordService.Stored<ThoughtOccurrence>, created: Bool
    ) {
        let patientID = try patient.requireID()
        if let existing = try await EntryRecord.find(id, on: database) {
            guard existing.$patient.id == patientID, existing.kind == .thoughtOccurrence else {
                throw AppError.conflict(.recordIDTaken)
            }
            let occurrence: RecordService.Stored<ThoughtOccurrence> = try records.open(existing)
            guard let thought = try await records.record(occurrence.content.thoughtID, Thought.self, of: patientID)
            else {
                throw AppError.notFound
            }
            return (thought, occurrence, false)
        }
        let thought = try await thought(
            Thought(text: text, origin: .patient, addedAt: fields.recordedAt), id: thoughtID ?? UUID(), for: patient
        ).stored
        let (occurrence, created) = try await records.create(
            fields.occurrence(of: try thought.record.requireID()), id: id, by: patient)
        return (thought, occurrence, created)
    }

    /// The person's thought with these words, or a new one: `created` says which.
    func thought(_ thought: Thought, id: UUID, for patient: UserRecord) async throws
        -> (stored: RecordService.Stored<Thought>, created: Bool)
    {
        let key = services.cipher.matchKey(Thought.matchKey(thought.text))
        if let found = try await EntryRecord.query(on: database).filter(\.$patient.$id == patient.requireID())
            .filter(\.$matchKey == key).first()
        {
            return (try records.open(found), false)
        }
        return try await records.create(thought, id: id, by: patient, matchKey: key)
    }

    /// Changes when an occurrence was and how it was rated, if nobody changed it since `baseVersion`; its thought
    /// stays.
    func update(_ id: UUID, _ fields: ThoughtOccurrence.Fields, baseVersion: Int, by patient: UserRecord) async throws
        -> RecordService.Stored<ThoughtOccurrence>
    {
        guard let stored = try await records.record(id, ThoughtOccurrence.self, of: patient.requireID()) else {
            throw AppError.notFound
        }
        return try await records.update(
            fields.occurrence(of: stored.content.thoughtID), id: id, baseVersion: baseVersion, by: patient)
    }

    /// Deletes a thought and every occurrence of it, if nobody changed the thought since `baseVersion`.
    func delete(_ id: UUID, baseVersion: Int, by patient: UserRecord) async throws {
        let patientID = try patient.requireID()
        guard try await records.record(id, Thought.self, of: patientID) != nil else { throw AppError.notFound }
        let now = now
        let services = services
        try await database.atomically { database in
            let records = RecordService(database: database, services: services)
            let deleted = try await database.deleteRow(EntryRecord.schema, id: id) {
                $0.where("version", .equal, SQLBind(baseVersion))
            }
            guard deleted else {
                throw try await EntryRecord.find(id, on: database) == nil
                    ? AppError.notFound : AppError.conflict(.recordChanged)
            }
            let occurrences = try await records.list(ThoughtOccurrence.self, of: patientID)
                .filter { $0.content.thoughtID == id }.compactMap(\.record.id)
            if !occurrences.isEmpty {
                try await EntryRecord.query(on: database).filter(\.$id ~~ occurrences).delete()
            }
            try await SyncStamps.bury(.thought, ids: [id], of: patientID, now: now, on: database)
            try await SyncStamps.bury(.thoughtOccurrence, ids: occurrences, of: patientID, now: now, on: database)
        }
    }
}
