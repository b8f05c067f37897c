import Foundation
import InterludeCore

extension APIHandler {
    func listMyThoughts(_ input: Operations.ListMyThoughts.Input) async throws -> Operations.ListMyThoughts.Output {
        let context = try APIContext.current()
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let patient = try await context.user(.patient)
        let page = ListPage(
            of: try await context.thoughts.thoughts(of: patient.requireID()), request, moment: \.addedAt, id: \.id)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next), body: .json(try page.items.map(Components.Schemas.Thought.init)))
        )
    }

    func createMyThoughtOccurrence(_ input: Operations.CreateMyThoughtOccurrence.Input) async throws
        -> Operations.CreateMyThoughtOccurrence.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        guard let id = UUID(uuidString: body.id) else { throw AppError.field("id", .invalidFormat) }
        let patient = try await context.user(.patient)
        let entry = try body.checked(now: context.services.clock.now)
        let recorded = try await context.thoughts.record(
            entry.text, entry.fields, id: id, thoughtID: entry.thoughtID, by: patient)
        let shown = Components.Schemas.ThoughtRecorded(
            thought: try .init(recorded.thought, occurrences: nil), occurrence: try .init(recorded.occurrence))
        return recorded.created ? .created(.init(body: .json(shown))) : .ok(.init(body: .json(shown)))
    }

    func updateMyThoughtOccurrence(_ input: Operations.UpdateMyThoughtOccurrence.Input) async throws
        -> Operations.UpdateMyThoughtOccurrence.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        let fields = try body.checked(now: context.services.clock.now)
        let stored = try await context.thoughts.update(
            try pathID(input.path.recordId), fields, baseVersion: body.baseVersion, by: patient)
        return .ok(.init(body: .json(try .init(stored))))
    }

    func deleteMyThoughtOccurrence(_ input: Operations.DeleteMyThoughtOccurrence.Input) async throws
        -> Operations.DeleteMyThoughtOccurrence.Output
    {
        try await APIContext.current().deleteRecord(
            .thoughtOccurrence, id: input.path.recordId, baseVersion: input.query.baseVersion)
        return .noContent
    }

    func deleteMyThought(_ input: Operations.DeleteMyThought.Input) async throws -> Operations.DeleteMyThought.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try await context.thoughts.delete(
            try pathID(input.path.recordId), baseVersion: input.query.baseVersion, by: patient)
        return .noContent
    }

    func listPatientThoughts(_ input: Operations.ListPatientThoughts.Input) async throws
        -> Operations.ListPatientThoughts.Output
    {
        let context = try APIContext.current()
        let query = input.query
        var validator = FieldValidator()
        validator.limit(query.q, field: "q", maxLength: 200)
        let request = PageRequest(cursor: query.cursor, limit: query.limit, checking: &validator)
        let filter = ThoughtService.Filter(
            words: query.q, from: validator.date(query.from, field: "from"), to: validator.date(query.to, field: "to"))
        try validator.check()
        let thoughts = try await context.chart(of: input.path.patientId).thoughts(filter)
        let page = ListPage(of: thoughts, request, moment: \.addedAt, id: \.id)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next), body: .json(try page.items.map(Components.Schemas.Thought.init)))
        )
    }

    func createPatientThought(_ input: Operations.CreatePatientThought.Input) async throws
        -> Operations.CreatePatientThought.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let id = try clientID(body.id)
        let text = try Thought.validate(text: body.text)
        let added = try await context.chart(of: input.path.patientId).addThought(text, id: id)
        let shown = try Components.Schemas.Thought(added.stored, occurrences: nil)
        return added.created ? .created(.init(body: .json(shown))) : .ok(.init(body: .json(shown)))
    }
}

extension APIContext {
    var thoughts: ThoughtService { ThoughtService(database: database, services: services) }
}

/// A thought's occurrence as an app sends it, checked: the words, the occurrence's own fields, and the id a new
/// thought takes.
struct ThoughtEntry: Sendable {
    let text: String
    let fields: ThoughtOccurrence.Fields
    let thoughtID: UUID?
}

extension Components.Schemas.ThoughtOccurrenceInput {
    func checked(now: Date) throws -> ThoughtEntry {
        var problems: [FieldError] = []
        var text: String?
        do { text = try Thought.validate(text: self.text) } catch { problems += error.errors }
        var fields: ThoughtOccurrence.Fields?
        do {
            fields = try ThoughtOccurrence.validate(
                recordedAt: recordedAt, ratingBefore: ratingBefore, ratingAfter: ratingAfter,
                location: location.map(ThoughtOccurrence.Location.init),
                note: note, now: now)
        } catch { problems += error.errors }
        let thoughtID = thoughtId.flatMap(UUID.init(uuidString:))
        if thoughtId != nil, thoughtID == nil { problems.append(FieldError(field: "thoughtId", code: .invalidFormat)) }
        guard problems.isEmpty, let text, let fields else { throw AppError.validation(problems) }
        return ThoughtEntry(text: text, fields: fields, thoughtID: thoughtID)
    }
}

extension Components.Schemas.ThoughtOccurrenceUpdate {
    func checked(now: Date) throws(ValidationFailure) -> ThoughtOccurrence.Fields {
        try ThoughtOccurrence.validate(
            recordedAt: recordedAt, ratingBefore: ratingBefore, ratingAfter: ratingAfter,
            location: location.map(ThoughtOccurrence.Location.init),
            note: note, now: now)
    }
}

extension ThoughtOccurrence.Location {
    init(_ location: Components.Schemas.ThoughtLocation) {
        self.init(latitude: location.latitude, longitude: location.longitude, accuracy: location.accuracy)
    }
}

extension Components.Schemas.Thought {
    init(_ listed: ThoughtService.Listed) throws {
        try self.init(listed.thought, occurrences: listed.occurrences)
    }

    init(_ stored: RecordService.Stored<Thought>, occurrences: [RecordService.Stored<ThoughtOccurrence>]?) throws {
        let record = stored.record
        self.init(
            id: try record.requireID().lowercasedText, version: record.version, text: stored.content.text,
            origin: stored.content.origin == .therapist ? .therapist : .patient, addedAt: stored.content.addedAt,
            occurrences: try occurrences?.map(Components.Schemas.ThoughtOccurrence.init), createdAt: record.createdAt,
            updatedAt: record.updatedAt)
    }
}

extension Components.Schemas.ThoughtOccurrence {
    init(_ stored: RecordService.Stored<ThoughtOccurrence>) throws {
        let record = stored.record
        let content = stored.content
        self.init(
            id: try record.requireID().lowercasedText, version: record.version,
            thoughtId: content.thoughtID.lowercasedText, recordedAt: content.recordedAt,
            ratingBefore: content.ratingBefore,
            ratingAfter: content.ratingAfter,
            location: content.location.map {
                .init(latitude: $0.latitude, longitude: $0.longitude, accuracy: $0.accuracy)
            },
            note: content.note, createdAt: record.createdAt, updatedAt: record.updatedAt)
    }
}
