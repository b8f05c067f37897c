import Foundation
import InterludeCore

/// One occurrence of a questionnaire for the signed-in person, as the server plans it.
public struct Prompt: Codable, Hashable, Sendable, Identifiable {
    public var id: UUID
    public var instrumentKey: String
    public var instrumentVersion: Int
    public var title: String
    public var opensAt: Date
    public var closesAt: Date
    public var status: PromptStatus
    public var source: PromptSource
    public var completedAt: Date?
    public var responseID: UUID?
    /// True while a one-time questionnaire of the same study must be answered first.
    public var blocked: Bool

    public init(
        id: UUID, instrumentKey: String, instrumentVersion: Int, title: String, opensAt: Date, closesAt: Date,
        status: PromptStatus, source: PromptSource, completedAt: Date? = nil, responseID: UUID? = nil,
        blocked: Bool = false
    ) {
        self.id = id
        self.instrumentKey = instrumentKey
        self.instrumentVersion = instrumentVersion
        self.title = title
        self.opensAt = opensAt
        self.closesAt = closesAt
        self.status = status
        self.source = source
        self.completedAt = completedAt
        self.responseID = responseID
        self.blocked = blocked
    }

    enum CodingKeys: String, CodingKey {
        case id, instrumentKey, instrumentVersion, title, opensAt, closesAt, status, source, completedAt, blocked
        case responseID = "responseId"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        instrumentKey = try container.decode(String.self, forKey: .instrumentKey)
        instrumentVersion = try container.decode(Int.self, forKey: .instrumentVersion)
        title = try container.decode(String.self, forKey: .title)
        opensAt = try container.decode(Date.self, forKey: .opensAt)
        closesAt = try container.decode(Date.self, forKey: .closesAt)
        status = try container.decode(PromptStatus.self, forKey: .status)
        source = try container.decode(PromptSource.self, forKey: .source)
        completedAt = try container.decodeIfPresent(Date.self, forKey: .completedAt)
        responseID = try container.decodeIfPresent(UUID.self, forKey: .responseID)
        blocked = try container.decodeIfPresent(Bool.self, forKey: .blocked) ?? false
    }

    /// The status at `now`, following the window unless the prompt was completed, cancelled or deactivated.
    public func status(at now: Date) -> PromptStatus {
        PromptStatus.at(now, recorded: status, opensAt: opensAt, closesAt: closesAt)
    }
}

/// A prompt as the app opens it.
public struct PromptDetail: Hashable, Sendable {
    public var prompt: Prompt
    public var definition: InstrumentDefinition
    /// Where some answers call for help at once (PHQ-9 item 9 above 0): show the emergency number as soon as one is given.
    public var crisis: CrisisSupport?
    /// Whether the person allowed the prompt's study to keep context (position, noise) with answers.
    public var contextGranted: Bool
}

/// Answers that call for help at once, and whom to call.
public struct CrisisSupport: Codable, Hashable, Sendable {
    public struct Trigger: Codable, Hashable, Sendable {
        public var itemId: String
        public var above: Double
    }

    public var items: [Trigger]
    public var emergencyNumber: String?
    public var therapistName: String?

    /// Whether these answers call for help at once: an item's value (its option's score) above its threshold.
    public func isCalledFor(by answers: Answers, in definition: InstrumentDefinition) -> Bool {
        items.contains { trigger in
            guard let answer = answers[trigger.itemId],
                let item = definition.items.first(where: { $0.id == trigger.itemId }),
                let value = definition.numericValue(of: answer, for: item)
            else { return false }
            return value > trigger.above
        }
    }
}

/// An appointment in the person's calendar; `version` grows with every change and guards concurrent edits.
public struct Appointment: Codable, Hashable, Sendable, Identifiable {
    /// Who booked it: a session the therapist booked is theirs to move or cancel, and the server refuses the person's
    /// changes to it.
    public enum BookedBy: String, Codable, Hashable, Sendable, CaseIterable { case patient, therapist }

    public var id: UUID
    public var title: String
    public var startsAt: Date
    public var endsAt: Date
    public var comment: String?
    public var timeZone: String
    public var version: Int
    public var bookedBy: BookedBy

    /// Whether the person may change or delete it from the app.
    public var isChangeable: Bool { bookedBy == .patient }

    public init(
        id: UUID, title: String, startsAt: Date, endsAt: Date, comment: String? = nil, timeZone: String, version: Int,
        bookedBy: BookedBy = .patient
    ) {
        self.id = id
        self.title = title
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.comment = comment
        self.timeZone = timeZone
        self.version = version
        self.bookedBy = bookedBy
    }

    private enum CodingKeys: String, CodingKey {
        case id, title, startsAt, endsAt, comment, timeZone, version, bookedBy
    }

    /// Appointments kept on the device before `bookedBy` was sent were the person's own.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(UUID.self, forKey: .id), title: try container.decode(String.self, forKey: .title),
            startsAt: try container.decode(Date.self, forKey: .startsAt),
            endsAt: try container.decode(Date.self, forKey: .endsAt),
            comment: try container.decodeIfPresent(String.self, forKey: .comment),
            timeZone: try container.decode(String.self, forKey: .timeZone),
            version: try container.decode(Int.self, forKey: .version),
            bookedBy: try container.decodeIfPresent(BookedBy.self, forKey: .bookedBy) ?? .patient)
    }
}

/// What a new or changed appointment says.
public struct AppointmentDraft: Codable, Hashable, Sendable {
    public var title: String
    public var startsAt: Date
    public var endsAt: Date
    public var comment: String?

    public init(title: String, startsAt: Date, endsAt: Date, comment: String? = nil) {
        self.title = title
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.comment = comment
    }
}

/// A commendation, task, question or message sent to the person. The server knows only whether it was seen or
/// completed; what the person answers stays on the device.
public struct Intervention: Codable, Hashable, Sendable, Identifiable {
    public enum Kind: String, Codable, Sendable, CaseIterable { case commendation, task, question, message }
    public enum Origin: String, Codable, Sendable, CaseIterable { case therapist, rule, messagePlan }
    public enum State: String, Codable, Sendable, CaseIterable { case sent, seen, completed }

    public var id: UUID
    public var kind: Kind
    public var origin: Origin
    public var text: String
    public var state: State
    public var sentAt: Date
    public var seenAt: Date?
    public var completedAt: Date?

    public init(
        id: UUID, kind: Kind, origin: Origin, text: String, state: State, sentAt: Date, seenAt: Date? = nil,
        completedAt: Date? = nil
    ) {
        self.id = id
        self.kind = kind
        self.origin = origin
        self.text = text
        self.state = state
        self.sentAt = sentAt
        self.seenAt = seenAt
        self.completedAt = completedAt
    }
}

/// The kinds of health record the person keeps.
public enum RecordKind: String, Codable, Hashable, Sendable, CaseIterable {
    case event, therapy, audiogram, mood, thought, thoughtOccurrence
}

/// One health record of any kind, as the kind's API shows it (JSON), with its id and version read out.
public struct HealthRecord: Codable, Hashable, Sendable, Identifiable {
    public var kind: RecordKind
    public var id: UUID
    public var version: Int?
    /// The record's JSON, as `GET /api/v1/me/<kind>s/{id}` answers it.
    public var body: Data

    public init(kind: RecordKind, body: Data) throws {
        struct Keys: Decodable {
            var id: UUID
            var version: Int?
        }
        let keys = try JSONDecoder().decode(Keys.self, from: body)
        self.kind = kind
        self.id = keys.id
        self.version = keys.version
        self.body = body
    }
}

/// Something the server deleted (or erased at the person's request) since the last pull.
public struct Tombstone: Codable, Hashable, Sendable {
    public enum Entity: String, Codable, Sendable, CaseIterable {
        case prompt, appointment, event, therapy, audiogram, mood, thought, thoughtOccurrence
    }

    public var entity: Entity
    public var id: UUID

    public init(entity: Entity, id: UUID) {
        self.entity = entity
        self.id = id
    }
}

/// What changed on the server since a cursor, or (`full`) everything the device should hold.
public struct ServerChanges: Sendable {
    public var cursor: String
    public var full: Bool
    public var prompts: [Prompt]
    public var instruments: [InstrumentDefinition]
    public var appointments: [Appointment]
    public var interventions: [Intervention]
    public var records: [HealthRecord]
    public var deleted: [Tombstone]

    /// True when nothing changed.
    public var isEmpty: Bool {
        prompts.isEmpty && instruments.isEmpty && appointments.isEmpty && interventions.isEmpty && records.isEmpty
            && deleted.isEmpty
    }
}

/// A response as the person confirmed it: answers keyed by item id, with the time the first answer was given and the
/// milliseconds spent per item (paradata the server works out response-quality indices from).
public struct ResponseSubmission: Codable, Hashable, Sendable {
    public var id: UUID
    public var promptID: UUID
    public var instrumentKey: String
    public var version: Int
    public var answers: Answers
    public var startedAt: Date?
    public var completedAt: Date
    public var itemTimesMs: [String: Int]?

    enum CodingKeys: String, CodingKey {
        case id, instrumentKey, version, answers, startedAt, completedAt, itemTimesMs
        case promptID = "promptId"
    }

    public init(
        id: UUID = UUID(), promptID: UUID, instrumentKey: String, version: Int, answers: Answers, startedAt: Date?,
        completedAt: Date, itemTimesMs: [String: Int]? = nil
    ) {
        self.id = id
        self.promptID = promptID
        self.instrumentKey = instrumentKey
        self.version = version
        self.answers = answers
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.itemTimesMs = itemTimesMs
    }
}

/// A change made on the device, sent to the server under its own id so that sending it twice applies it once.
public enum Change: Codable, Hashable, Sendable {
    case response(ResponseSubmission)
    case createAppointment(id: UUID, AppointmentDraft)
    case updateAppointment(id: UUID, baseVersion: Int, AppointmentDraft)
    case deleteAppointment(id: UUID, baseVersion: Int)
    case interventionSeen(id: UUID)
    case interventionCompleted(id: UUID)
    /// `body` is what the kind's API takes to create a record (JSON).
    case createRecord(RecordKind, id: UUID, body: Data)
    case updateRecord(RecordKind, id: UUID, baseVersion: Int, body: Data)
    case deleteRecord(RecordKind, id: UUID, baseVersion: Int)
    case notification(promptID: UUID, DeviceNotificationEvent, at: Date)
}

/// A change the server did not apply because what it was based on changed meanwhile: the person's version and the
/// server's, for the app to show. `server` is nil when the server's copy is gone.
public struct SyncConflict: Codable, Hashable, Sendable, Identifiable {
    public enum ServerVersion: Codable, Hashable, Sendable {
        case appointment(Appointment)
        case record(HealthRecord)
        case deleted
    }

    public var id: UUID
    public var local: Change
    public var server: ServerVersion
}

/// The answer to one sent change.
public enum ChangeOutcome: Hashable, Sendable {
    /// Applied (or applied before: `replayed`).
    case applied(replayed: Bool)
    /// Based on a version that moved on; nothing was applied.
    case conflict(SyncConflict.ServerVersion)
    /// Refused, with the server's reason.
    case rejected(Problem)
    /// Names data erased at the person's request: the local copy goes.
    case erased
    /// Held until the person answers a study's new consent version; send it again afterwards.
    case waiting
}

/// An RFC 9457 problem as the server reports it, with the fields it names.
public struct Problem: Error, Codable, Hashable, Sendable {
    public struct FieldProblem: Codable, Hashable, Sendable {
        public var field: String
        public var code: String
        public var detail: String
    }

    public var type: String
    public var title: String
    public var status: Int
    public var detail: String?
    public var fields: [FieldProblem]

    public init(type: String, title: String, status: Int, detail: String? = nil, fields: [FieldProblem] = []) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.fields = fields
    }
}

/// The signed-in account.
public struct Account: Hashable, Sendable {
    public var id: UUID
    public var email: String
    public var timeZone: String
    public var emailVerified: Bool
    public var pseudonym: String?
    public var paired: Bool
}

/// A health or wearable measurement (HealthKit's quantity samples and the like).
public struct Sample: Codable, Hashable, Sendable {
    public var type: String
    public var value: Double
    public var unit: String
    public var startsAt: Date
    public var endsAt: Date
    /// The source's own id (HealthKit's UUID): the same id again changes nothing.
    public var sourceID: String

    public init(type: String, value: Double, unit: String, startsAt: Date, endsAt: Date, sourceID: String) {
        self.type = type
        self.value = value
        self.unit = unit
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.sourceID = sourceID
    }
}

/// A sample type one of the person's studies asks for, and whether the person allowed it.
public struct SampleTypeChoice: Hashable, Sendable {
    public var type: String
    /// The canonical unit.
    public var unit: String
    public var purposes: [String]
    public var enabled: Bool
}
