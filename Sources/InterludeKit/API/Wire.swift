import Foundation
import InterludeCore
import OpenAPIRuntime

/// Conversions between the generated wire types and the SDK's own. Types with the same JSON shape are converted
/// through JSON, so the two can never disagree about a field the other does not name.
enum Wire {
    static func reshape<Value: Decodable>(_ value: some Encodable, as type: Value.Type) throws -> Value {
        try JSONDecoder().decode(type, from: JSONEncoder().encode(value))
    }

    static func object(_ json: Data) throws -> OpenAPIObjectContainer {
        try JSONDecoder().decode(OpenAPIObjectContainer.self, from: json)
    }

    static func data(_ object: OpenAPIObjectContainer) throws -> Data {
        try JSONEncoder().encode(object)
    }

    static func id(_ uuid: UUID) -> String { uuid.uuidString.lowercased() }

    static func mutation(_ id: UUID, _ change: Change) throws -> Components.Schemas.SyncMutation {
        var mutation = Components.Schemas.SyncMutation(id: Self.id(id), _type: .response)
        switch change {
        case .response(let response):
            mutation.response = try reshape(response, as: Components.Schemas.ResponseSubmission.self)
        case .createAppointment(let appointment, let draft):
            mutation._type = .appointment_create
            mutation.appointmentId = Self.id(appointment)
            mutation.appointment = try reshape(draft, as: Components.Schemas.AppointmentInput.self)
        case .updateAppointment(let appointment, let base, let draft):
            mutation._type = .appointment_update
            mutation.appointmentId = Self.id(appointment)
            mutation.baseVersion = base
            mutation.appointment = try reshape(draft, as: Components.Schemas.AppointmentInput.self)
        case .deleteAppointment(let appointment, let base):
            mutation._type = .appointment_delete
            mutation.appointmentId = Self.id(appointment)
            mutation.baseVersion = base
        case .interventionSeen(let intervention):
            mutation._type = .intervention_seen
            mutation.interventionId = Self.id(intervention)
        case .interventionCompleted(let intervention):
            mutation._type = .intervention_complete
            mutation.interventionId = Self.id(intervention)
        case .createRecord(let kind, let record, let body):
            mutation._type = .record_create
            mutation.recordKind = Components.Schemas.RecordKind(rawValue: kind.rawValue)
            mutation.recordId = Self.id(record)
            mutation.record = try object(body)
        case .updateRecord(let kind, let record, let base, let body):
            mutation._type = .record_update
            mutation.recordKind = Components.Schemas.RecordKind(rawValue: kind.rawValue)
            mutation.recordId = Self.id(record)
            mutation.baseVersion = base
            mutation.record = try object(body)
        case .deleteRecord(let kind, let record, let base):
            mutation._type = .record_delete
            mutation.recordKind = Components.Schemas.RecordKind(rawValue: kind.rawValue)
            mutation.recordId = Self.id(record)
            mutation.baseVersion = base
        case .notification(let prompt, let event, let at):
            mutation._type = .prompt_notification
            mutation.promptId = Self.id(prompt)
            let wire: Components.Schemas.SyncMutation.NotificationPayload.EventPayload =
                switch event {
                case .planned: .planned
                case .delivered: .delivered
                case .opened: .opened
                }
            mutation.notification = .init(event: wire, at: at)
        }
        return mutation
    }

    static func outcome(_ result: Components.Schemas.SyncResult, for change: Change, id: UUID) throws -> ChangeOutcome {
        switch result.status {
        case .applied: return .applied(replayed: result.replayed)
        case .waiting: return .waiting
        case .rejected:
            let problem =
                result.problem.map(Problem.init) ?? Problem(type: "about:blank", title: "Refused", status: 422)
            return problem.type == "/problems/erased" ? .erased : .rejected(problem)
        case .conflict:
            if result.deleted == true { return .conflict(.deleted) }
            if let appointment = result.appointment {
                return .conflict(.appointment(try reshape(appointment, as: Appointment.self)))
            }
            if let kind = result.recordKind.flatMap({ RecordKind(rawValue: $0.rawValue) }), let record = result.record {
                return .conflict(.record(try HealthRecord(kind: kind, body: data(record))))
            }
            return .conflict(.deleted)
        }
    }
}

extension ServerChanges {
    init(_ wire: Components.Schemas.SyncChanges) throws {
        cursor = wire.cursor
        full = wire.full
        prompts = try wire.prompts.map { try Wire.reshape($0, as: Prompt.self) }
        instruments = wire.instruments
        appointments = try wire.appointments.map { try Wire.reshape($0, as: Appointment.self) }
        interventions = try wire.interventions.map { try Wire.reshape($0, as: Intervention.self) }
        records = try wire.records.compactMap { record in
            guard let kind = RecordKind(rawValue: record.kind.rawValue) else { return nil }
            return try HealthRecord(kind: kind, body: Wire.data(record.record))
        }
        deleted = wire.deleted.compactMap { tombstone in
            guard let entity = Tombstone.Entity(rawValue: tombstone.entity.rawValue),
                let id = UUID(uuidString: tombstone.id)
            else {
                return nil
            }
            return Tombstone(entity: entity, id: id)
        }
    }
}

extension Problem {
    init(_ wire: Components.Schemas.Problem) {
        self.init(
            type: wire._type, title: wire.title, status: wire.status, detail: wire.detail,
            fields: (wire.errors ?? []).map { FieldProblem(field: $0.field, code: $0.code.rawValue, detail: $0.detail) }
        )
    }

    init(_ status: Int, _ response: Components.Responses.Problem) {
        switch response.body {
        case .applicationProblemJson(let problem): self.init(problem)
        }
    }
}

extension Account {
    init(_ user: Components.Schemas.User) throws {
        guard let id = UUID(uuidString: user.id) else {
            throw Problem(
                type: "/problems/malformed-answer", title: "The server named the account by no id", status: 502)
        }
        self.init(
            id: id, email: user.email, timeZone: user.timeZone, emailVerified: user.emailVerified,
            pseudonym: user.patient?.pseudonym,
            paired: user.patient?.paired ?? false)
    }
}
