import Fluent
import Foundation
import InterludeCore

/// The study monitor: for each participant a study's team may follow, how prompts reached them and how they answered
/// over the last days, with the signs that something went quiet; and one participant's prompts, each with how it
/// ended and what every notification about it met. Participants who do not share with research show no figures to
/// researchers, as on the study's page.
struct StudyMonitor: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// The periods the monitor offers, in days.
    static let periods = [1, 7, 30, 90]

    struct Row: Sendable {
        let participant: StudyService.Participant
        /// Nil where the reader may not see the participant's data.
        let monitor: ParticipantMonitor?
    }

    /// Every participant of the study the reader follows, over the last `days`.
    func rows(of grant: StudyGrant, days: Int) async throws -> [Row] {
        try grant.require(.readParticipantData)
        let participants = try await StudyService(database: database, services: services).participants(of: grant)
            .filter { $0.enrollment.status != .requested }
        let visible = participants.filter {
            StudyAccessPolicy.seesData(of: $0.sharesWithResearch, as: grant.standing, in: grant.kind)
        }
        .map { $0.enrollment.$patient.id }
        let prompts = try await self.prompts(of: visible, in: grant.studyID, days: days)
        let delivered = try await deliveries(of: prompts.map { try $0.requireID() })
        let quality = try await qualityFlags(of: prompts.compactMap(\.responseID))
        let gone = try await subscriptionsGone(of: visible)
        let seen = try await lastSeen(of: visible)
        let byPatient = Dictionary(grouping: prompts, by: { $0.$patient.id })
        let shown = Set(visible)
        let now = self.now
        return participants.map { participant in
            let patientID = participant.enrollment.$patient.id
            guard shown.contains(patientID) else { return Row(participant: participant, monitor: nil) }
            let monitored = (byPatient[patientID] ?? []).map {
                Self.monitored($0, delivered: delivered, quality: quality, now: now)
            }
            return Row(
                participant: participant,
                monitor: ParticipantMonitor.of(
                    prompts: monitored, subscriptionGone: gone.contains(patientID), lastSeen: seen[patientID], now: now)
            )
        }
    }

    /// One prompt of a participant's timeline: how it ended, why, and what its notifications met.
    struct Entry: Sendable {
        let prompt: PromptRecord
        let status: PromptStatus
        let outcome: PromptOutcome
        let reason: PromptOutcome.Reason?
        let notifications: [NotificationRecord]
        /// The quality flags of its response, when it was answered.
        let qualityFlags: [ResponseQuality.Flag]
    }

    /// A participant's prompts of the last `days`, latest first; nil when the reader may not see them.
    func timeline(of patientID: UUID, in grant: StudyGrant, days: Int) async throws -> (
        participant: StudyService.Participant, entries: [Entry]
    )? {
        try grant.require(.readParticipantData)
        let participants = try await StudyService(database: database, services: services).participants(of: grant)
        guard let participant = participants.first(where: { $0.enrollment.$patient.id == patientID }),
            StudyAccessPolicy.seesData(of: participant.sharesWithResearch, as: grant.standing, in: grant.kind)
        else { return nil }
        let prompts = try await self.prompts(of: [patientID], in: grant.studyID, days: days)
        let notifications =
            prompts.isEmpty
            ? []
            : try await NotificationRecord.query(on: database)
                .filter(\.$promptID ~~ prompts.map { $0.id })
                .sort(\.$dueAt).all()
        let byPrompt = Dictionary(grouping: notifications, by: { $0.promptID })
        let quality = try await qualityFlags(of: prompts.compactMap(\.responseID))
        let now = self.now
        let entries = prompts.reversed().map { prompt in
            let status = PromptStatus.at(
                now, recorded: prompt.status, opensAt: prompt.opensAt, closesAt: prompt.closesAt)
            let own = byPrompt[prompt.id] ?? []
            let delivered = own.contains { $0.sentAt != nil } || prompt.deviceNotifiedAt != nil
            let (outcome, reason) = PromptOutcome.of(
                status: status, delivered: delivered, misses: own.compactMap(\.miss), cancelled: prompt.cancelReason)
            return Entry(
                prompt: prompt, status: status, outcome: outcome, reason: reason, notifications: own,
                qualityFlags: prompt.responseID.flatMap { quality[$0] } ?? [])
        }
        return (participant, entries)
    }

    /// The prompts of `patientIDs` in the study that opened in the last `days`, earliest first.
    private func prompts(of patientIDs: [UUID], in studyID: UUID, days: Int) async throws -> [PromptRecord] {
        let since = now.addingTimeInterval(-Double(days) * 86_400)
        var prompts: [PromptRecord] = []
        for batch in patientIDs.batches() {
            prompts += try await PromptRecord.query(on: database)
                .filter(\.$patient.$id ~~ Array(batch)).filter(\.$study.$id == studyID)
                .filter(\.$opensAt > since).filter(\.$opensAt <= now)
                .sort(\.$opensAt).all()
        }
        return prompts
    }

    /// When a notification about each prompt first reached its person.
    private func deliveries(of promptIDs: [UUID]) async throws -> [UUID: Date] {
        var first: [UUID: Date] = [:]
        for batch in promptIDs.batches() {
            let sent = try await NotificationRecord.query(on: database)
                .filter(\.$promptID ~~ batch.map(Optional.some)).filter(\.$sentAt != nil)
                .field(\.$promptID).field(\.$sentAt).all()
            for notification in sent {
                guard let promptID = notification.promptID, let at = notification.sentAt else { continue }
                first[promptID] = min(first[promptID] ?? at, at)
            }
        }
        return first
    }

    /// The quality flags of each of these responses that has any.
    private func qualityFlags(of responseIDs: [UUID]) async throws -> [UUID: [ResponseQuality.Flag]] {
        var flags: [UUID: [ResponseQuality.Flag]] = [:]
        for batch in responseIDs.batches() {
            for response in try await ResponseRecord.query(on: database).filter(\.$id ~~ Array(batch))
                .field(\.$id).field(\.$quality).all()
            {
                guard let id = response.id, let found = ResponseService.quality(of: response)?.flags, !found.isEmpty
                else { continue }
                flags[id] = found
            }
        }
        return flags
    }

    /// The participants whose every device's subscription the push service said is gone.
    private func subscriptionsGone(of patientIDs: [UUID]) async throws -> Set<UUID> {
        var devices: [DeviceRecord] = []
        for batch in patientIDs.batches() {
            devices += try await DeviceRecord.query(on: database).filter(\.$user.$id ~~ Array(batch)).all()
        }
        return Set(
            Dictionary(grouping: devices, by: { $0.$user.id }).filter { $0.value.allSatisfy { $0.disabledAt != nil } }
                .keys)
    }

    /// When each participant's device last reached the server: their latest session use or response.
    private func lastSeen(of patientIDs: [UUID]) async throws -> [UUID: Date] {
        var seen: [UUID: Date] = [:]
        func note(_ user: UUID, _ at: Date) { seen[user] = max(seen[user] ?? at, at) }
        for batch in patientIDs.batches() {
            for session in try await SessionRecord.query(on: database).filter(\.$user.$id ~~ Array(batch))
                .field(\.$user.$id).field(\.$lastUsedAt).all()
            {
                note(session.$user.id, session.lastUsedAt)
            }
            for response in try await ResponseRecord.query(on: database).filter(\.$patient.$id ~~ Array(batch))
                .field(\.$patient.$id).field(\.$receivedAt).all()
            {
                note(response.$patient.id, response.receivedAt)
            }
        }
        return seen
    }

    private static func monitored(
        _ prompt: PromptRecord, delivered: [UUID: Date], quality: [UUID: [ResponseQuality.Flag]], now: Date
    ) -> MonitoredPrompt {
        MonitoredPrompt(
            opensAt: prompt.opensAt, closesAt: prompt.closesAt,
            status: PromptStatus.at(now, recorded: prompt.status, opensAt: prompt.opensAt, closesAt: prompt.closesAt),
            deliveredAt: [prompt.id.flatMap { delivered[$0] }, prompt.deviceNotifiedAt].compactMap { $0 }.min(),
            openedAt: prompt.openedAt, submittedAt: prompt.completedAt,
            qualityFlags: prompt.responseID.flatMap { quality[$0] } ?? [])
    }
}
