import Foundation
import InterludeCore
import InterludeSQLite
import OpenAPIRuntime

extension APIHandler {
    func pullChanges(_ input: Operations.PullChanges.Input) async throws -> Operations.PullChanges.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let changes = try await context.sync.pull(for: patient, since: input.query.since)
        let known =
            input.headers.ifNoneMatch?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        if known.contains(changes.etag) || known.contains("*") {
            return .notModified(.init())
        }
        let prompts = try await context.promptBodies(changes.prompts)
        let today = LocalDate(context.services.clock.now, in: patient.zone)
        let records = try changes.records.map { record in
            Components.Schemas.SyncRecord(
                kind: .init(record.kind), record: try context.records.shown(record, today: today))
        }
        return .ok(
            .init(
                headers: .init(eTag: changes.etag),
                body: .json(
                    .init(
                        cursor: changes.cursor, full: changes.full, prompts: prompts, instruments: changes.instruments,
                        appointments: changes.appointments.map(Components.Schemas.Appointment.init),
                        deleted: changes.deleted.map {
                            .init(entity: .init(rawValue: $0.entity.rawValue) ?? .prompt, id: $0.id.lowercasedText)
                        },
                        therapist: changes.therapist.map(Components.Schemas.TherapistProfile.init),
                        interventions: changes.interventions.map(Components.Schemas.Intervention.init), records: records
                    ))))
    }

    func pushChanges(_ input: Operations.PushChanges.Input) async throws -> Operations.PushChanges.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let patient = try await context.user(.patient)
        guard body.mutations.count <= 200 else { throw AppError.field("mutations", .tooLong, limit: 200) }
        var validator = FieldValidator()
        var mutations: [(id: UUID, mutation: SyncService.Mutation)] = []
        for (index, item) in body.mutations.enumerated() {
            let place = "mutations.\(index)"
            guard let id = UUIDText.parse(item.id) else {
                validator.add("\(place).id", .invalidFormat)
                continue
            }
            do {
                mutations.append((id, try Self.mutation(item, id: id, place: place)))
            } catch let failure as ValidationFailure {
                for error in failure.errors { validator.add(error.field, error.code, limit: error.limit) }
            } catch AppError.validation(let errors) {
                for error in errors { validator.add("\(place).\(error.field)", error.code, limit: error.limit) }
            }
        }
        try validator.check()
        let results = try await context.sync.push(mutations, for: patient, language: context.request.language)
        var bodies: [Components.Schemas.SyncResult] = []
        for result in results {
            let appointment = try await result.appointmentID.asyncMap {
                try await context.sync.appointment($0, of: patient)
            }
            let intervention = try await result.interventionID.asyncMap {
                try await context.sync.intervention($0, of: patient)
            }
            let record = try await result.recordID.asyncMap { try await context.records.shown($0, of: patient) }.flatMap
            { $0 }
            bodies.append(
                .init(
                    id: result.id.lowercasedText, status: .init(rawValue: result.status.rawValue) ?? .rejected,
                    replayed: result.replayed,
                    appointment: appointment.flatMap { $0 }.map(Components.Schemas.Appointment.init),
                    deleted: result.deleted ? true : nil, responseId: result.responseID?.lowercasedText,
                    intervention: intervention.flatMap { $0 }.map(Components.Schemas.Intervention.init),
                    recordKind: record.map { .init($0.kind) }, record: record?.body,
                    problem: result.problem.map {
                        .init(
                            _type: $0.type, title: $0.title, status: $0.status, detail: $0.detail,
                            errors: $0.errors?.compactMap { problem in
                                Components.Schemas.FieldProblem.CodePayload(rawValue: problem.code).map {
                                    .init(field: problem.field, code: $0, detail: problem.detail, limit: problem.limit)
                                }
                            })
                    }))
        }
        return .ok(.init(body: .json(.init(results: bodies))))
    }

    /// One mutation as the service takes it; problems are named by their place in the batch.
    static func mutation(_ item: Components.Schemas.SyncMutation, id: UUID, place: String) throws
        -> SyncService.Mutation
    {
        func fields(_ input: Components.Schemas.AppointmentInput?) throws(ValidationFailure)
            -> SyncService.AppointmentFields
        {
            guard let input else { throw ValidationFailure(field: "\(place).appointment", code: .required) }
            return .init(title: input.title, startsAt: input.startsAt, endsAt: input.endsAt, comment: input.comment)
        }
        func uuid(_ raw: String?, _ name: String) throws(ValidationFailure) -> UUID {
            guard let raw else { throw ValidationFailure(field: "\(place).\(name)", code: .required) }
            guard let id = UUIDText.parse(raw) else {
                throw ValidationFailure(field: "\(place).\(name)", code: .invalidFormat)
            }
            return id
        }
        func appointmentID() throws(ValidationFailure) -> UUID { try uuid(item.appointmentId, "appointmentId") }
        func baseVersion() throws(ValidationFailure) -> Int {
            guard let version = item.baseVersion else {
                throw ValidationFailure(field: "\(place).baseVersion", code: .required)
            }
            return version
        }
        func kind() throws(ValidationFailure) -> RecordKind {
            guard let kind = item.recordKind else {
                throw ValidationFailure(field: "\(place).recordKind", code: .required)
            }
            return RecordKind(kind)
        }
        func body() throws -> Data {
            guard let record = item.record else { throw ValidationFailure(field: "\(place).record", code: .required) }
            return try JSONEncoder().encode(record)
        }
        switch item._type {
        case .response:
            guard let response = item.response else {
                throw ValidationFailure(field: "\(place).response", code: .required)
            }
            return .response(try submission(from: response))
        case .appointment_create:
            return .createAppointment(
                id: item.appointmentId == nil ? id : try appointmentID(), try fields(item.appointment))
        case .appointment_update:
            return .updateAppointment(
                id: try appointmentID(), baseVersion: try baseVersion(), try fields(item.appointment))
        case .appointment_delete:
            return .deleteAppointment(id: try appointmentID(), baseVersion: try baseVersion())
        case .intervention_seen:
            return .interventionSeen(id: try uuid(item.interventionId, "interventionId"))
        case .intervention_complete:
            return .completeIntervention(id: try uuid(item.interventionId, "interventionId"))
        case .record_create:
            return .createRecord(
                try kind(), id: item.recordId == nil ? id : try uuid(item.recordId, "recordId"), body: try body())
        case .record_update:
            return .updateRecord(
                try kind(), id: try uuid(item.recordId, "recordId"), baseVersion: try baseVersion(), body: try body())
        case .record_delete:
            return .deleteRecord(try kind(), id: try uuid(item.recordId, "recordId"), baseVersion: try baseVersion())
        case .prompt_notification:
            guard let notification = item.notification else {
                throw ValidationFailure(field: "\(place).notification", code: .required)
            }
            let event: DeviceNotificationEvent =
                switch notification.event {
                case .planned: .planned
                case .delivered: .delivered
                case .opened: .opened
                }
            return .promptNotification(promptID: try uuid(item.promptId, "promptId"), event, at: notification.at)
        }
    }
}

extension APIContext {
    var sync: SyncService { SyncService(database: database, services: services) }
}

extension RecordKind {
    init(_ kind: Components.Schemas.RecordKind) {
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

extension Components.Schemas.RecordKind {
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
