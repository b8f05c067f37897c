import Crypto
import Fluent
import Foundation
import InterludeCore
import SQLKit

/// Keeps a patient's apps in step with the server: what changed since a cursor (pull), and the changes an app
/// made offline (push), each applied once under the app's own id, appointments by the version they were based on.
struct SyncService: Sendable {
    let database: any Database
    let services: AppServices

    /// Changes this long before a cursor come again, so one committed late or stamped by a server whose clock
    /// runs a little behind is not missed.
    static let overlap: TimeInterval = 30
    /// How far back a full picture reaches.
    static let history: TimeInterval = 30 * 86_400

    private var now: Date { services.clock.now }

    // MARK: Pull

    struct Changes: Sendable {
        var full: Bool
        var prompts: [SyncReads.Prompt]
        /// The definitions of the prompts' instrument versions.
        var instruments: [InstrumentDefinition]
        var appointments: [AppointmentService.Shown]
        var deleted: [(entity: SyncEntity, id: UUID)]
        var therapist: TherapistProfiles.Contact?
        var interventions: [InterventionService.Opened]
        /// The person's health records, every kind.
        var records: [EntryRecord]
        var cursor: String
        /// Names the content; equal for equal content, so an unchanged answer can be 304.
        var etag: String
    }

    /// `since` is a cursor from an earlier answer; without one (or an unreadable one) the full picture.
    func pull(for patient: UserRecord, since: String?) async throws -> Changes {
        let patientID = try patient.requireID()
        let now = self.now
        let changedAfter = since.flatMap(Self.date(ofCursor:)).map { $0.addingTimeInterval(-Self.overlap) }
        let reads = SyncReads(database: database)
        let window: SyncReads.Window
        var deleted: [(entity: SyncEntity, id: UUID)] = []
        if let changedAfter {
            window = .changedAfter(changedAfter)
            deleted = try await reads.deletions(of: patientID, after: changedAfter)
        } else {
            window = .from(horizon: now.addingTimeInterval(-Self.history))
        }
        let prompts = try await reads.prompts(of: patientID, in: window, now: now)
        let cipher = services.cipher
        let appointments = try await reads.appointments(of: patientID, in: window).map { row in
            AppointmentService.Shown(
                id: row.id, startsAt: row.startsAt, endsAt: row.endsAt, timeZone: row.timeZone, version: row.version,
                updatedAt: row.updatedAt, title: try cipher.open(row.sealedTitle),
                comment: try row.sealedComment.map(cipher.open),
                bookedByTherapist: row.createdBy.map { $0 != patientID } ?? false,
                request: try row.requestKind.map { kind in
                    AppointmentService.Request(
                        kind: kind, startsAt: row.requestStartsAt, endsAt: row.requestEndsAt,
                        note: try row.sealedRequestNote.map(cipher.open), requestedAt: row.requestedAt ?? row.updatedAt)
                })
        }
        let interventions = try await reads.interventions(of: patientID, arrivedBy: now, in: window).map { row in
            InterventionService.Opened(
                id: row.id, kind: row.kind, origin: row.origin, deliverAt: row.deliverAt, seenAt: row.seenAt,
                completedAt: row.completedAt, text: try cipher.open(row.sealedText))
        }
        let records = try await reads.records(of: patientID, changedAfter: changedAfter)
        let definitions = try await InstrumentCatalog(database: database, services: services).definitions(
            Set(prompts.map { InstrumentVersionKey(key: $0.instrumentKey, version: $0.instrumentVersion) }))
        let instruments = definitions.sorted { ($0.key.key, $0.key.version) < ($1.key.key, $1.key.version) }.map(
            \.value)
        let therapist = try await TherapistProfiles(database: database).contact(ofTherapistOf: patientID)
        return Changes(
            full: changedAfter == nil, prompts: prompts, instruments: instruments, appointments: appointments,
            deleted: deleted, therapist: therapist, interventions: interventions, records: records,
            cursor: Self.cursor(for: now),
            etag: Self.etag(
                prompts: prompts, appointments: appointments, interventions: interventions, records: records,
                deleted: deleted,
                therapist: therapist, full: changedAfter == nil))
    }

    static func cursor(for date: Date) -> String { "c\(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))" }

    static func date(ofCursor cursor: String) -> Date? {
        guard cursor.hasPrefix("c"), let millis = Int64(cursor.dropFirst()), millis > 0 else { return nil }
        return Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    /// A digest of what identifies each item's state: ids, statuses, versions, change moments, the therapist's
    /// details. Fed to the hash as bytes, never as text.
    private static func etag(
        prompts: [SyncReads.Prompt], appointments: [AppointmentService.Shown],
        interventions: [InterventionService.Opened], records: [EntryRecord], deleted: [(entity: SyncEntity, id: UUID)],
        therapist: TherapistProfiles.Contact?, full: Bool
    ) -> String {
        var digest = ETagDigest()
        digest.add(full ? "full" : "changes")
        for prompt in prompts {
            digest.add("p", prompt.id, prompt.status.rawValue, prompt.changedAt?.timeIntervalSince1970 ?? 0)
        }
        for appointment in appointments { digest.add("a", appointment.id, appointment.version) }
        for intervention in interventions { digest.add("i", intervention.id, intervention.state.rawValue) }
        for record in records { digest.add("r", record.id!, record.version) }
        for (entity, id) in deleted { digest.add("d", entity.rawValue, id) }
        if let therapist {
            digest.add(
                "t", therapist.therapistID, therapist.fullName, therapist.gender ?? "", therapist.officeAddress ?? "",
                therapist.phone ?? "", therapist.emergencyNumber ?? "", therapist.email)
        }
        return digest.value
    }

    // MARK: Push

    enum Mutation: Sendable {
        case response(ResponseService.Submission)
        case createAppointment(id: UUID, AppointmentFields)
        case updateAppointment(id: UUID, baseVersion: Int, AppointmentFields)
        case deleteAppointment(id: UUID, baseVersion: Int)
        case interventionSeen(id: UUID)
        case completeIntervention(id: UUID)
        /// A health record's body as its kind's API takes it.
        case createRecord(RecordKind, id: UUID, body: Data)
        case updateRecord(RecordKind, id: UUID, baseVersion: Int, body: Data)
        case deleteRecord(RecordKind, id: UUID, baseVersion: Int)
        case promptNotification(promptID: UUID, DeviceNotificationEvent, at: Date)

        /// The ids of the records the mutation names.
        var ids: [UUID] {
            switch self {
            case .response(let submission): return [submission.id, submission.promptID]
            case .createAppointment(let id, _), .updateAppointment(let id, _, _), .deleteAppointment(let id, _):
                return [id]
            case .interventionSeen(let id), .completeIntervention(let id): return [id]
            case .createRecord(_, let id, _), .updateRecord(_, let id, _, _), .deleteRecord(_, let id, _): return [id]
            case .promptNotification(let promptID, _, _): return [promptID]
            }
        }
    }

    struct AppointmentFields: Sendable {
        var title: String
        var startsAt: Date
        var endsAt: Date
        var comment: String?
    }

    /// What became of one mutation; kept under its id so a repeat gets the same answer. It holds ids only:
    /// what patients wrote stays sealed in its own table.
    struct Result: Codable, Sendable {
        enum Status: String, Codable, Sendable {
            case applied
            case conflict
            case rejected
            /// Not applied and not kept: send it again later (a consent version waits for an answer).
            case waiting
        }

        var id: UUID
        var status: Status
        var replayed = false
        var appointmentID: UUID?
        var deleted = false
        var responseID: UUID?
        var interventionID: UUID?
        var recordID: UUID?
        var problem: ProblemDocument?
    }

    /// Applies the mutations in order and answers each.
    func push(_ mutations: [(id: UUID, mutation: Mutation)], for patient: UserRecord, language: Language) async throws
        -> [Result]
    {
        let patientID = try patient.requireID()
        var results: [Result] = []
        let erased = ErasedIDs(database: database, services: services)
        for (id, mutation) in mutations {
            // A change to data erased meanwhile is answered, not kept: the app drops its copy.
            if try await erased.containsAny([id] + mutation.ids) {
                results.append(rejected(id, .erased, language: language))
                continue
            }
            if let replay = try await replay(id, for: patientID, language: language) {
                results.append(replay)
                continue
            }
            var result: Result
            do {
                result = try await apply(mutation, id: id, for: patient)
            } catch AppError.conflict(.consentRequired) {
                // Held back, not answered for good: the app keeps the change and sends it once the person has
                // answered the study's new consent version.
                results.append(
                    Result(
                        id: id, status: .waiting,
                        problem: ProblemDocument(
                            .conflict(.consentRequired), language: language, localizer: services.localizer)))
                continue
            } catch let error as AppError {
                result = rejected(id, error, language: language)
            } catch let failure as ValidationFailure {
                result = rejected(id, failure.appError, language: language)
            }
            do {
                try await SyncMutationRecord(
                    id: id, userID: patientID,
                    result: String(decoding: try JSONEncoder().encode(result), as: UTF8.self),
                    now: now
                ).create(on: database)
            } catch  where (error as? any DatabaseError)?.isConstraintFailure == true {
                // The same batch, sent again at this moment, recorded the mutation first: its answer stands.
                guard let replay = try await replay(id, for: patientID, language: language) else { throw error }
                result = replay
            }
            results.append(result)
        }
        return results
    }

    /// The stored answer to a mutation applied before, marked as a replay; a mutation id of someone else's is
    /// refused. Nil for a mutation not seen yet.
    private func replay(_ id: UUID, for patientID: UUID, language: Language) async throws -> Result? {
        guard let earlier = try await SyncMutationRecord.find(id, on: database) else { return nil }
        guard earlier.$user.id == patientID,
            var result = try? JSONDecoder().decode(Result.self, from: Data(earlier.result.utf8))
        else { return rejected(id, .field("id", .duplicate), language: language) }
        result.replayed = true
        return result
    }

    private func rejected(_ id: UUID, _ error: AppError, language: Language) -> Result {
        Result(
            id: id, status: .rejected,
            problem: ProblemDocument(error, language: language, localizer: services.localizer))
    }

    private func apply(_ mutation: Mutation, id: UUID, for patient: UserRecord) async throws -> Result {
        let appointments = AppointmentService(database: database, services: services)
        let records = RecordService(database: database, services: services)
        switch mutation {
        case .response(let submission):
            // Answers given offline are kept even where the person withdrew their context consent before they went.
            switch try await ResponseService(database: database, services: services)
                .submit(submission, patient: patient, declinedContext: .dropped)
            {
            case .created(let stored), .repeated(let stored):
                return Result(id: id, status: .applied, responseID: try stored.record.requireID())
            }
        case .createAppointment(let appointmentID, let fields):
            if let existing = try await AppointmentRecord.find(appointmentID, on: database) {
                guard existing.$patient.id == patient.id else { throw AppError.field("appointmentId", .duplicate) }
                return Result(id: id, status: .applied, appointmentID: appointmentID)
            }
            do {
                _ = try await appointments.create(
                    for: patient, by: patient, title: fields.title, startsAt: fields.startsAt, endsAt: fields.endsAt,
                    comment: fields.comment, id: appointmentID)
            } catch  where (error as? any DatabaseError)?.isConstraintFailure == true {
                // Created at this moment by the same change sent again: what it wanted is the case.
                guard try await own(appointmentID, of: patient) != nil else {
                    throw AppError.field("appointmentId", .duplicate)
                }
            }
            return Result(id: id, status: .applied, appointmentID: appointmentID)
        case .updateAppointment(let appointmentID, let baseVersion, let fields):
            guard let current = try await own(appointmentID, of: patient) else {
                return Result(id: id, status: .conflict, appointmentID: appointmentID, deleted: true)
            }
            // A session the therapist booked stays as they booked it: the app shows it as it is.
            guard current.version == baseVersion, !AppointmentService.bookedByTherapist(current) else {
                return Result(id: id, status: .conflict, appointmentID: appointmentID)
            }
            do {
                _ = try await appointments.update(
                    appointmentID, of: patient, baseVersion: baseVersion, title: fields.title,
                    startsAt: fields.startsAt,
                    endsAt: fields.endsAt, comment: fields.comment)
            } catch AppError.conflict(.appointmentChanged) {
                return Result(id: id, status: .conflict, appointmentID: appointmentID)
            }
            return Result(id: id, status: .applied, appointmentID: appointmentID)
        case .deleteAppointment(let appointmentID, let baseVersion):
            // Gone already: what the change wanted is the case.
            guard let current = try await own(appointmentID, of: patient) else {
                return Result(id: id, status: .applied, appointmentID: appointmentID, deleted: true)
            }
            guard current.version == baseVersion, !AppointmentService.bookedByTherapist(current) else {
                return Result(id: id, status: .conflict, appointmentID: appointmentID)
            }
            try await appointments.delete(appointmentID, of: patient)
            return Result(id: id, status: .applied, appointmentID: appointmentID, deleted: true)
        case .interventionSeen(let interventionID):
            _ = try await InterventionService(database: database, services: services).markSeen(
                interventionID, by: patient)
            return Result(id: id, status: .applied, interventionID: interventionID)
        case .completeIntervention(let interventionID):
            do {
                _ = try await InterventionService(database: database, services: services).complete(
                    interventionID, by: patient)
            } catch AppError.conflict(.interventionCompleted) {
                // Completed from another device meanwhile: what this change wanted is the case.
            }
            return Result(id: id, status: .applied, interventionID: interventionID)
        case .createRecord(let kind, let recordID, let body):
            _ = try await records.syncCreate(kind, id: recordID, body: body, by: patient)
            return Result(id: id, status: .applied, recordID: recordID)
        case .updateRecord(let kind, let recordID, let baseVersion, let body):
            let outcome = try await records.syncUpdate(
                kind, id: recordID, baseVersion: baseVersion, body: body, by: patient)
            return Result(
                id: id, status: outcome == .applied ? .applied : .conflict, deleted: outcome == .gone,
                recordID: recordID)
        case .deleteRecord(let kind, let recordID, let baseVersion):
            let outcome = try await records.syncDelete(kind, id: recordID, baseVersion: baseVersion, by: patient)
            return Result(
                id: id, status: outcome == .applied ? .applied : .conflict, deleted: outcome == .applied,
                recordID: recordID)
        case .promptNotification(let promptID, let event, let at):
            try await PromptService(database: database, services: services)
                .recordDeviceNotification(event, at: at, promptID: promptID, for: try patient.requireID())
            return Result(id: id, status: .applied)
        }
    }

    /// The intervention as it is now, for a result that names one.
    func intervention(_ id: UUID, of patient: UserRecord) async throws -> InterventionService.Opened? {
        guard let record = try await InterventionRecord.find(id, on: database), record.$patient.id == patient.id else {
            return nil
        }
        return try InterventionService(database: database, services: services).open(record)
    }

    private func own(_ appointmentID: UUID, of patient: UserRecord) async throws -> AppointmentRecord? {
        guard let record = try await AppointmentRecord.find(appointmentID, on: database),
            record.$patient.id == patient.id
        else { return nil }
        return record
    }

    /// The appointment as it is now, for a result that names one.
    func appointment(_ id: UUID, of patient: UserRecord) async throws -> AppointmentService.Shown? {
        try await own(id, of: patient).map(AppointmentService(database: database, services: services).open)
    }
}
