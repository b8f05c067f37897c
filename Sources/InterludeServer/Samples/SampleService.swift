import Fluent
import Foundation
import InterludeCore

/// A person's samples: what their studies ask for, which types they allow, the window their mood reports open,
/// and the samples themselves, stored in batches and idempotent by the source's id.
package struct SampleService: Sendable {
    let database: any Database
    let services: AppServices

    package init(database: any Database, services: AppServices) {
        self.database = database
        self.services = services
    }

    private var now: Date { services.clock.now }
    /// Rows per insert statement: thirteen columns each stay well under every database's limit of parameters.
    package static let insertRows = 1000

    /// What came of a batch.
    struct Ingested: Sendable {
        var stored = 0
        var duplicates = 0
        var rejected: [(index: Int, errors: [FieldError])] = []
    }

    /// What the person's studies ask for together.
    func collection(of patientID: UUID) async throws -> SampleCollection {
        SampleCollection.union(try await RecordSettings.studies(of: patientID, on: database).map(\.samples))
    }

    /// The types the person allows.
    func enabled(of patientID: UUID) async throws -> Set<SampleType> {
        Set(
            try await SampleChoiceRecord.query(on: database).filter(\.$patient.$id == patientID).filter(
                \.$enabled == true
            ).all(\.$type))
    }

    /// From the person's first mood report to their last, if they made any.
    func moodSpan(of patientID: UUID) async throws -> SampleCollection.MoodSpan? {
        let moods = EntryRecord.query(on: database).filter(\.$patient.$id == patientID).filter(\.$kind == .mood)
        guard let first = try await moods.copy().min(\.$occurredAt),
            let last = try await moods.copy().max(\.$occurredAt)
        else {
            return nil
        }
        return .init(first: first, last: last)
    }

    /// Checks a batch as sent, keeps what the person allows inside the window, and stores it.
    func ingest(_ raw: [Sample.Raw], for patientID: UUID) async throws -> Ingested {
        let batch = try Sample.validate(batch: raw, now: now)
        let screened = try await collection(of: patientID)
            .screen(batch, enabled: try await enabled(of: patientID), moods: try await moodSpan(of: patientID))
        let stored = try await insert(screened.accepted.map(\.sample), for: patientID)
        return Ingested(stored: stored, duplicates: screened.accepted.count - stored, rejected: screened.rejected)
    }

    /// Inserts samples in multi-row statements, one transaction for the lot; a source id stored before is passed
    /// over. Answers how many were new.
    func insert(_ samples: [Sample], for patientID: UUID) async throws -> Int {
        guard !samples.isEmpty else { return 0 }
        let created = now
        return try await database.atomically { database in
            var inserted = 0
            for chunk in samples.batches(of: Self.insertRows) {
                inserted += try await Statements.insertSamples(Array(chunk), of: patientID, at: created, on: database)
            }
            return inserted
        }
    }

    /// One type as the person sees it: asked for by their studies (and why), allowed or not, how many are stored.
    package struct Choice: Sendable {
        let type: SampleType
        let asked: SampleCollection.Asked?
        let enabled: Bool
        let count: Int
    }

    /// The types the person's studies ask for, and any other type they still have samples of.
    func choices(of patientID: UUID) async throws -> [Choice] {
        let collection = try await collection(of: patientID)
        let enabled = try await enabled(of: patientID)
        let counts = try await counts(of: patientID)
        return SampleType.allCases.filter { collection.asked[$0] != nil || counts[$0, default: 0] > 0 }.map { type in
            Choice(
                type: type, asked: collection.asked[type], enabled: enabled.contains(type),
                count: counts[type, default: 0])
        }
    }

    func choice(_ type: SampleType, of patientID: UUID) async throws -> Choice {
        try await choices(of: patientID).first { $0.type == type }
            ?? Choice(type: type, asked: nil, enabled: false, count: 0)
    }

    /// How many samples of each type the person has on the server.
    func counts(of patientID: UUID) async throws -> [SampleType: Int] {
        try await Statements.sampleCounts(of: patientID, on: database)
    }

    /// Allows or stops a type. Stopping deletes every sample of the type at once; allowing needs a study asking for it.
    package func setEnabled(_ type: SampleType, _ enabled: Bool, for patientID: UUID) async throws -> Choice {
        if enabled, try await collection(of: patientID).asked[type] == nil { throw AppError.field("type", .notAllowed) }
        try await database.atomically { database in
            if let choice = try await SampleChoiceRecord.query(on: database).filter(\.$patient.$id == patientID).filter(
                \.$type == type
            )
            .first() {
                choice.enabled = enabled
                choice.changedAt = now
                try await choice.save(on: database)
            } else {
                try await SampleChoiceRecord(patientID: patientID, type: type, enabled: enabled, now: now).create(
                    on: database)
            }
            if !enabled {
                try await SampleRecord.query(on: database).filter(\.$patient.$id == patientID).filter(\.$type == type)
                    .delete()
            }
        }
        return try await choice(type, of: patientID)
    }

    /// The person's samples, by start, a page at a time.
    func list(of patientID: UUID, type: SampleType?, from: Date?, to: Date?, offset: Int, limit: Int) async throws
        -> [SampleRecord]
    {
        var query = SampleRecord.query(on: database).filter(\.$patient.$id == patientID)
        if let type { query = query.filter(\.$type == type) }
        if let from { query = query.filter(\.$start >= from) }
        if let to { query = query.filter(\.$end <= to) }
        return try await query.sort(\.$start).sort(\.$id).offset(offset).limit(limit).all()
    }

    /// One type's values per day over the `days` up to today in the person's zone, with the day's mean mood.
    struct DayRow: Sendable {
        let date: LocalDate
        let value: SampleType.Day?
        let mood: Double?
    }

    func days(_ type: SampleType, of patient: UserRecord, days: Int) async throws -> [DayRow] {
        let patientID = try patient.requireID()
        let zone = patient.zone
        let today = LocalDate(now, in: zone)
        let first = LocalDate(daysSinceEpoch: today.daysSinceEpoch - days + 1)
        let since = LocalDateTime(date: first, hour: 0, minute: 0)!.instant(in: zone)
        let values = try await Statements.sampleValues(type, of: patientID, since: since, on: database)
        let daily = type.daily(values, in: zone)
        let moods = try await RecordService(database: database, services: services).list(Mood.self, of: patientID)
            .map { (value: $0.content.valence, start: $0.content.recordedAt) }
        let moodDays = SampleType.DailyAggregate.mean.days(moods, in: zone)
        return (first.daysSinceEpoch...today.daysSinceEpoch).map { day in
            let date = LocalDate(daysSinceEpoch: day)
            return DayRow(date: date, value: daily[date], mood: moodDays[date]?.value)
        }
    }
}
