import Fluent
import Foundation
import InterludeCore

/// Prompts: one instrument for one participant inside a time window. Therapists assign them by hand now;
/// schedules and rules create them through the same `create`.
struct PromptService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// A prompt with its status at this moment.
    struct Current: ListedPrompt {
        let record: PromptRecord
        let status: PromptStatus

        var id: UUID { record.id! }
        var instrumentKey: String { record.instrumentKey }
        var instrumentVersion: Int { record.instrumentVersion }
        var opensAt: Date { record.opensAt }
        var closesAt: Date { record.closesAt }
        var source: PromptSource { record.source }
        var completedAt: Date? { record.completedAt }
        var responseID: UUID? { record.responseID }
    }

    func current(_ record: PromptRecord) -> Current {
        Current(
            record: record,
            status: PromptStatus.at(
                now, recorded: record.status, opensAt: record.opensAt,
                closesAt: record.closesAt))
    }

    /// Creates a prompt for the version of `instrumentKey` the study uses (see `InstrumentCatalog.pinnedVersion`).
    func create(
        patientID: UUID, studyID: UUID?, assignedBy: UUID?, instrumentKey: String, opensAt: Date, closesAt: Date,
        source: PromptSource
    ) async throws -> PromptRecord {
        guard
            let instrument = try await InstrumentCatalog(database: database, services: services)
                .pinnedVersion(instrumentKey, for: studyID)
        else { throw AppError.field("instrumentKey", .unknown) }
        let prompt = PromptRecord(
            patientID: patientID, studyID: studyID, assignedBy: assignedBy, instrumentKey: instrument.key,
            instrumentVersion: instrument.version, opensAt: opensAt, closesAt: closesAt, source: source, now: now)
        try await prompt.create(on: database)
        return prompt
    }

    /// A staff member assigns an instrument to a participant of the study.
    func assign(
        by staff: UserRecord, patientID: UUID, studyID: UUID, instrumentKey: String, opensAt: Date, closesAt: Date
    ) async throws -> PromptRecord {
        try PromptTiming.checkWindow(opensAt: opensAt, closesAt: closesAt, now: now)
        return try await create(
            patientID: patientID, studyID: studyID, assignedBy: staff.requireID(),
            instrumentKey: instrumentKey, opensAt: opensAt, closesAt: closesAt, source: .manual)
    }

    /// The patient's prompts in the given states, or only those in `studies`: open ones one-time first, then by
    /// deadline; others newest first.
    func prompts(of patientID: UUID, statuses: Set<PromptStatus>, studies: Set<UUID>? = nil) async throws -> [Current] {
        var query = PromptRecord.query(on: database).filter(\.$patient.$id == patientID)
        if let studies { query = query.filter(\.$study.$id ~~ Array(studies)) }
        let all =
            try await query
            .sort(\.$closesAt)
            .all()
            .map(current)
            // A deactivated questionnaire's prompt is listed, marked inactive, while its window lasts.
            .filter { statuses.contains($0.status) && ($0.status != .inactive || $0.record.closesAt > now) }
        guard statuses.contains(.open) else { return all.reversed() }
        return all.filter { Self.isOneTime($0.record) } + all.filter { !Self.isOneTime($0.record) }
    }

    /// How a participant keeps up: prompts answered, missed and open so far.
    struct Compliance: Sendable, Equatable {
        var completed = 0
        var expired = 0
        var open = 0

        /// The share answered of those that closed or were answered, in percent; nil before any.
        var percent: Int? {
            let due = completed + expired
            return due == 0 ? nil : Int((Double(completed) * 100 / Double(due)).rounded())
        }

        /// Below this share answered, a participant is listed for the study's staff to look after.
        static let lowPercent = 50

        var isLow: Bool { percent.map { $0 < Self.lowPercent } ?? false }

        mutating func count(_ status: PromptStatus) {
            switch status {
            case .completed: completed += 1
            case .expired: expired += 1
            case .open: open += 1
            case .scheduled, .cancelled, .inactive: break
            }
        }
    }

    /// Compliance of these participants in one study, week by week, the last week ending now.
    func weeklyCompliance(of patientIDs: [UUID], in studyID: UUID, weeks: Int) async throws -> [(
        end: Date, compliance: Compliance
    )] {
        let start = now.addingTimeInterval(-Double(weeks) * 7 * 86_400)
        let records = try await PromptRecord.query(on: database)
            .filter(\.$patient.$id ~~ patientIDs).filter(\.$study.$id == studyID)
            .filter(\.$opensAt > start).filter(\.$opensAt <= now)
            .field(\.$patient.$id).field(\.$status).field(\.$opensAt).field(\.$closesAt).field(\.$study.$id)
            .all()
        var result = (1...max(weeks, 1)).map {
            (end: start.addingTimeInterval(Double($0) * 7 * 86_400), compliance: Compliance())
        }
        for record in records {
            let week = (record.opensAt.timeIntervalSince(start) / (7 * 86_400)).rounded(.down).clampedInt ?? 0
            let index = min(result.count - 1, max(0, week))
            result[index].compliance.count(current(record).status)
        }
        return result
    }

    /// Compliance per patient over the prompts that have opened, in `studies` when given.
    /// `until`: for patients whose treatment ended, only prompts made and opened before its end count.
    func compliance(of patientIDs: [UUID], studies: Set<UUID>? = nil, until: [UUID: Date] = [:]) async throws -> [UUID:
        Compliance]
    {
        var query = PromptRecord.query(on: database)
            .filter(\.$patient.$id ~~ patientIDs)
            .filter(\.$opensAt <= now)
            .field(\.$patient.$id).field(\.$status).field(\.$opensAt).field(\.$closesAt).field(\.$study.$id)
            .field(\.$createdAt)
        if let studies { query = query.filter(\.$study.$id ~~ Array(studies)) }
        var result = Dictionary(uniqueKeysWithValues: patientIDs.map { ($0, Compliance()) })
        for record in try await query.all() {
            if let end = until[record.$patient.id], record.opensAt > end || record.createdAt > end { continue }
            result[record.$patient.id]?.count(current(record).status)
        }
        return result
    }

    /// A one-time questionnaire from a plan, which comes before the study's repeated ones.
    static func isOneTime(_ prompt: PromptRecord) -> Bool {
        isOneTime(occurrence: prompt.occurrence)
    }

    static func isOneTime(occurrence: String?) -> Bool {
        occurrence == "once"
    }

    /// Open prompts that wait because a one-time questionnaire of the same study is still open.
    func blocked(among prompts: [Current], patientID: UUID) async throws -> Set<UUID> {
        let candidates = prompts.filter {
            Self.mayWait(occurrence: $0.record.occurrence, status: $0.status, studyID: $0.record.$study.id)
        }
        guard !candidates.isEmpty else { return [] }
        let waiting = try await studiesWaitingForOneTime(of: patientID)
        return Set(candidates.filter { $0.record.$study.id.map(waiting.contains) == true }.compactMap(\.record.id))
    }

    /// Whether a prompt is one that waits while its study's one-time questionnaire is open: an open prompt of a study
    /// that is not itself the one-time one.
    static func mayWait(occurrence: String?, status: PromptStatus, studyID: UUID?) -> Bool {
        !isOneTime(occurrence: occurrence) && status == .open && studyID != nil
    }

    /// The studies whose one-time questionnaire is open for the patient now.
    func studiesWaitingForOneTime(of patientID: UUID) async throws -> Set<UUID> {
        let now = self.now
        return Set(
            try await Statements.oneTimePrompts(of: patientID, on: database).compactMap { prompt in
                let status = PromptStatus.at(
                    now, recorded: prompt.status, opensAt: prompt.opensAt, closesAt: prompt.closesAt)
                return status == .open ? prompt.studyID : nil
            })
    }

    /// Keeps what a notification the patient's device showed by itself did for one of their prompts: the first
    /// time of each event counts (an opened one also opens the prompt, as opening it in the app would).
    func recordDeviceNotification(
        _ event: DeviceNotificationEvent, at: Date, promptID: UUID, for patientID: UUID
    ) async throws {
        guard let record = try await PromptRecord.find(promptID, on: database), record.$patient.id == patientID else {
            throw AppError.field("promptId", .unknown)
        }
        try DeviceNotificationEvent.check(event, at: at, opensAt: record.opensAt, now: now, field: "notification.at")
        switch event {
        case .planned: record.devicePlannedAt = min(record.devicePlannedAt ?? at, at)
        case .delivered: record.deviceNotifiedAt = min(record.deviceNotifiedAt ?? at, at)
        case .opened: record.openedAt = min(record.openedAt ?? at, at)
        }
        if record.hasChanges { try await record.save(on: database) }
    }

    /// One of the patient's own prompts; notes the first time it was opened.
    func open(_ promptID: UUID, for patientID: UUID) async throws -> Current {
        guard let record = try await PromptRecord.find(promptID, on: database), record.$patient.id == patientID else {
            throw AppError.notFound
        }
        let prompt = current(record)
        if prompt.status == .open, record.openedAt == nil {
            record.openedAt = now
            try await record.save(on: database)
        }
        return prompt
    }
}

/// A prompt as the API lists it, whichever way it was read.
protocol ListedPrompt: Sendable {
    var id: UUID { get }
    var instrumentKey: String { get }
    var instrumentVersion: Int { get }
    var opensAt: Date { get }
    var closesAt: Date { get }
    /// The status at the moment the prompt was read.
    var status: PromptStatus { get }
    var source: PromptSource { get }
    var completedAt: Date? { get }
    var responseID: UUID? { get }
}
