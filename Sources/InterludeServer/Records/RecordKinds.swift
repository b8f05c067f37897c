import Fluent
import Foundation
import InterludeCore

/// What the server needs of one record kind, declared once per kind: how it is shown back, exported and coded.
protocol RecordKindContent: RecordContent {
    associatedtype Shown: Encodable & Sendable

    static func shown(_ stored: RecordService.Stored<Self>, today: LocalDate) throws -> Shown

    /// The kind's columns in a research export, after pseudonym, record id and version.
    static var exportColumns: [String] { get }
    /// The record's rows in its export file (an audiogram has one per point); `time` writes a moment.
    func exportRows(_ time: (Date) -> ExportTime) -> [[String?]]
    /// The record as a FHIR R4 resource.
    func fhirResource(id: UUID, subject: FHIR.Identifier, today: LocalDate) -> any FHIRRecordResource
}

/// A kind an app creates and edits as a whole: the body it sends (the same in the API and in a sync mutation), and
/// how it is checked. Thoughts are not: an occurrence finds its thought by its words (`ThoughtService`).
protocol EditableRecordContent: RecordKindContent {
    associatedtype Input: Decodable & Sendable

    static func validate(_ input: Input, rules: RecordRules) throws -> Self
}

/// A FHIR resource a record becomes, named by its type.
protocol FHIRRecordResource: Encodable, Sendable {
    var resourceType: String { get }
}

extension FHIR.Observation: FHIRRecordResource {}
extension FHIR.Procedure: FHIRRecordResource {}

/// What a person's studies add to the built-in choices of their records, and the moment they are checked at.
struct RecordRules: Sendable {
    /// Event types the person's studies name besides the built-in ones.
    var eventTypes: Set<String> = []
    var now: Date
}

extension RecordSettings {
    /// What the studies and practice a person takes part in collect together.
    static func ofStudies(of patientID: UUID, on database: any Database) async throws -> RecordSettings {
        .union(try await studies(of: patientID, on: database))
    }

    /// The settings of each study the person takes part in.
    static func studies(of patientID: UUID, on database: any Database) async throws -> [RecordSettings] {
        try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$status == EnrollmentStatus.active).with(\.$study).all()
            .map(\.study.recordSettings)
    }
}

extension RecordService {
    /// The choices the person's studies add, for checking their records.
    func rules(for patient: UserRecord) async throws -> RecordRules {
        RecordRules(
            eventTypes: Set(try await RecordSettings.ofStudies(of: patient.requireID(), on: database).eventTypes),
            now: services.clock.now)
    }
}

extension RecordKind {
    /// The content of each kind: the one switch a new kind joins on the server.
    var content: any RecordKindContent.Type {
        switch self {
        case .event: HealthEvent.self
        case .therapy: Therapy.self
        case .audiogram: Audiogram.self
        case .mood: Mood.self
        case .thought: Thought.self
        case .thoughtOccurrence: ThoughtOccurrence.self
        }
    }
}

/// How apps change records of a kind.
enum RecordEditing {
    /// Created and edited as a whole, through the kind's own body.
    case whole(any EditableRecordContent.Type)
    /// Thoughts: removed (with their occurrences), never sent on their own.
    case thought
    /// Occurrences: created with their thought's words, edited without them.
    case thoughtOccurrence
}

extension RecordKind {
    var editing: RecordEditing {
        switch self {
        case .event: .whole(HealthEvent.self)
        case .therapy: .whole(Therapy.self)
        case .audiogram: .whole(Audiogram.self)
        case .mood: .whole(Mood.self)
        case .thought: .thought
        case .thoughtOccurrence: .thoughtOccurrence
        }
    }
}

extension HealthEvent: EditableRecordContent {
    static func validate(_ input: Components.Schemas.HealthEventInput, rules: RecordRules) throws -> HealthEvent {
        try validate(
            title: input.title, occurredAt: input.occurredAt, type: input._type, description: input.description,
            studyTypes: rules.eventTypes)
    }

    static func shown(_ stored: RecordService.Stored<HealthEvent>, today: LocalDate) throws
        -> Components.Schemas.HealthEvent
    {
        try .init(stored)
    }

    static let exportColumns = ["occurred_utc", "occurred_local", "time_zone", "type", "title", "description"]

    func exportRows(_ time: (Date) -> ExportTime) -> [[String?]] {
        let occurred = time(occurredAt)
        return [[occurred.utc, occurred.local, occurred.zone, type, title, description]]
    }

    func fhirResource(id: UUID, subject: FHIR.Identifier, today: LocalDate) -> any FHIRRecordResource {
        fhirObservation(id: id, subject: subject)
    }
}

extension Therapy: EditableRecordContent {
    static func validate(_ input: Components.Schemas.TherapyInput, rules: RecordRules) throws -> Therapy {
        try validate(
            name: input.name, kind: input._type, startDate: input.startDate, endDate: input.endDate, note: input.note)
    }

    static func shown(_ stored: RecordService.Stored<Therapy>, today: LocalDate) throws -> Components.Schemas.Therapy {
        try .init(stored, today: today)
    }

    static let exportColumns = ["type", "name", "start_date", "end_date", "note"]

    func exportRows(_ time: (Date) -> ExportTime) -> [[String?]] {
        [[kind.rawValue, name, startDate.description, endDate?.description, note]]
    }

    func fhirResource(id: UUID, subject: FHIR.Identifier, today: LocalDate) -> any FHIRRecordResource {
        fhirProcedure(id: id, subject: subject, today: today)
    }
}

extension Audiogram: EditableRecordContent {
    static func validate(_ input: Components.Schemas.AudiogramInput, rules: RecordRules) throws -> Audiogram {
        try validate(measuredAt: input.measuredAt, points: input.points.map(Audiogram.RawPoint.init))
    }

    static func shown(_ stored: RecordService.Stored<Audiogram>, today: LocalDate) throws
        -> Components.Schemas.Audiogram
    {
        try .init(stored)
    }

    static let exportColumns = [
        "measured_utc", "measured_local", "time_zone", "ear", "frequency_hz", "threshold_db_hl", "no_response",
        "conduction", "masked",
    ]

    func exportRows(_ time: (Date) -> ExportTime) -> [[String?]] {
        let measured = time(measuredAt)
        return points.map { point in
            [
                measured.utc, measured.local, measured.zone, point.ear.rawValue, String(point.frequencyHz),
                point.thresholdDbHL.map(String.init),
                point.thresholdDbHL == nil ? "1" : "0", point.conduction.rawValue, point.masked ? "1" : "0",
            ]
        }
    }

    func fhirResource(id: UUID, subject: FHIR.Identifier, today: LocalDate) -> any FHIRRecordResource {
        fhirObservation(id: id, subject: subject)
    }
}

extension Mood: EditableRecordContent {
    static func validate(_ input: Components.Schemas.MoodInput, rules: RecordRules) throws -> Mood {
        try validate(valence: input.valence, recordedAt: input.recordedAt, note: input.note, now: rules.now)
    }

    static func shown(_ stored: RecordService.Stored<Mood>, today: LocalDate) throws -> Components.Schemas.Mood {
        try .init(stored)
    }

    static let exportColumns = ["recorded_utc", "recorded_local", "time_zone", "valence"]

    /// The note stays out of research exports: it is the person's own, as the study tells them.
    func exportRows(_ time: (Date) -> ExportTime) -> [[String?]] {
        let recorded = time(recordedAt)
        return [[recorded.utc, recorded.local, recorded.zone, valence.plainText(decimals: 3)]]
    }

    func fhirResource(id: UUID, subject: FHIR.Identifier, today: LocalDate) -> any FHIRRecordResource {
        fhirObservation(id: id, subject: subject)
    }
}

extension Thought: RecordKindContent {
    static func shown(_ stored: RecordService.Stored<Thought>, today: LocalDate) throws -> Components.Schemas.Thought {
        try .init(stored, occurrences: nil)
    }

    static let exportColumns = ["added_utc", "added_local", "time_zone", "origin", "text"]

    func exportRows(_ time: (Date) -> ExportTime) -> [[String?]] {
        let added = time(addedAt)
        return [[added.utc, added.local, added.zone, origin.rawValue, text]]
    }

    func fhirResource(id: UUID, subject: FHIR.Identifier, today: LocalDate) -> any FHIRRecordResource {
        fhirObservation(id: id, subject: subject)
    }
}

extension ThoughtOccurrence: RecordKindContent {
    static func shown(_ stored: RecordService.Stored<ThoughtOccurrence>, today: LocalDate) throws
        -> Components.Schemas.ThoughtOccurrence
    {
        try .init(stored)
    }

    static let exportColumns = [
        "thought_id", "recorded_utc", "recorded_local", "time_zone", "rating_before", "rating_after", "change",
    ]

    /// Where it happened and the note stay out of research exports: they are the person's own.
    func exportRows(_ time: (Date) -> ExportTime) -> [[String?]] {
        let recorded = time(recordedAt)
        return [
            [
                thoughtID.lowercasedText, recorded.utc, recorded.local, recorded.zone,
                ratingBefore.plainText(decimals: 3),
                ratingAfter.plainText(decimals: 3), change.plainText(decimals: 3),
            ]
        ]
    }

    func fhirResource(id: UUID, subject: FHIR.Identifier, today: LocalDate) -> any FHIRRecordResource {
        fhirObservation(id: id, subject: subject)
    }
}
