import Fluent
import Foundation
import InterludeCore

/// The study monitor's pages: the participants with their figures and flags, flagged ones first; and one
/// participant's prompts, each with how it ended and what its notifications met.
struct MonitorPages: Sendable {
    /// What the monitor is asked for, checked at the door.
    struct Query: Sendable {
        var days = 7
        var flag: ParticipantMonitor.Flag?
        var sort = Sort.flags

        enum Sort: String, Sendable, CaseIterable {
            /// Most flags first, then most missed in a row.
            case flags
            /// Longest unseen first.
            case lastSeen
            case pseudonym
        }

        init(days: String?, flag: String?, sort: String?) throws {
            var validator = FieldValidator()
            if let days {
                if let number = Int(days), StudyMonitor.periods.contains(number) {
                    self.days = number
                } else {
                    validator.add("days", .invalidValue)
                }
            }
            if let flag, !flag.isEmpty {
                self.flag = ParticipantMonitor.Flag(rawValue: flag)
                if self.flag == nil { validator.add("flag", .invalidValue) }
            }
            if let sort {
                if let chosen = Sort(rawValue: sort) {
                    self.sort = chosen
                } else {
                    validator.add("sort", .invalidValue)
                }
            }
            try validator.check()
        }
    }

    struct Link: Encodable, Sendable {
        let label: String
        let link: String
        let current: Bool
    }

    struct FlagView: Encodable, Sendable {
        let key: String
        let label: String
    }

    struct Row: Encodable, Sendable {
        let pseudonym: String
        /// Nil where the participant does not share with research.
        let link: String?
        let planned: Int
        let delivered: Int
        let answered: Int
        let missedInRow: Int
        let flaggedResponses: Int
        let deliveredToOpened: String
        let openedToSubmitted: String
        let lastSeen: String
        let flags: [FlagView]
    }

    struct MonitorContent: Encodable, Sendable {
        let studyTitle: String
        let studyLink: String
        let days: Int
        let periods: [Link]
        let filters: [Link]
        let sorts: [Link]
        let rows: [Row]
        let flagged: Int
        let notShared: Int
    }

    struct NotificationView: Encodable, Sendable {
        let due: String
        let status: String
        let channel: String
        let reason: String
        let attempts: [String]
    }

    struct Entry: Encodable, Sendable {
        let instrument: String
        let opens: String
        let closes: String
        let outcome: String
        let reason: String?
        let opened: String?
        let submitted: String?
        /// The response's quality flags in words.
        let quality: [String]
        let notifications: [NotificationView]
    }

    struct TimelineContent: Encodable, Sendable {
        let studyTitle: String
        let monitorLink: String
        let pseudonym: String
        let days: Int
        let periods: [Link]
        let entries: [Entry]
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }
    private var localizer: Localizer { services.localizer }

    func monitor(_ grant: StudyGrant, _ query: Query) async throws -> MonitorContent {
        let all = try await StudyMonitor(database: database, services: services).rows(of: grant, days: query.days)
        let shown = all.filter { row in query.flag.map { row.monitor?.flags.contains($0) == true } ?? true }
        let display = viewer.dateDisplay
        let rows = sorted(shown, by: query.sort).map { row in
            let figures = row.monitor
            return Row(
                pseudonym: row.participant.pseudonym,
                link: figures.map { _ in
                    ConsoleURL.monitorParticipant(study: grant.studyID, patient: row.participant.enrollment.$patient.id)
                        .path + "?days=\(query.days)"
                },
                planned: figures?.planned ?? 0, delivered: figures?.delivered ?? 0, answered: figures?.answered ?? 0,
                missedInRow: figures?.missedInRow ?? 0, flaggedResponses: figures?.flaggedResponses ?? 0,
                deliveredToOpened: duration(figures?.deliveredToOpened),
                openedToSubmitted: duration(figures?.openedToSubmitted),
                lastSeen: figures.map { $0.lastSeen.map(display.dateTime) ?? "–" }
                    ?? localizer.text("console.monitor.notShared", language),
                flags: (figures?.flags ?? []).map { FlagView(key: $0.rawValue, label: label($0)) })
        }
        let base = ConsoleURL.monitor(study: grant.studyID).path
        func link(days: Int? = nil, flag: ParticipantMonitor.Flag?? = nil, sort: Query.Sort? = nil) -> String {
            var items = ["days=\(days ?? query.days)", "sort=\((sort ?? query.sort).rawValue)"]
            if let chosen = flag ?? query.flag { items.append("flag=\(chosen.rawValue)") }
            return base + "?" + items.joined(separator: "&")
        }
        return MonitorContent(
            studyTitle: grant.study.titles.text(language), studyLink: ConsoleURL.study(grant.studyID).path,
            days: query.days,
            periods: StudyMonitor.periods.map {
                Link(label: period($0), link: link(days: $0), current: $0 == query.days)
            },
            filters: [
                Link(
                    label: localizer.text("console.monitor.everyone", language), link: link(flag: .some(nil)),
                    current: query.flag == nil)
            ]
                + ParticipantMonitor.Flag.allCases.map { flag in
                    let count = all.filter { $0.monitor?.flags.contains(flag) == true }.count
                    return Link(
                        label: "\(label(flag)) (\(count))", link: link(flag: .some(flag)), current: flag == query.flag)
                },
            sorts: Query.Sort.allCases.map {
                Link(
                    label: localizer.text("console.monitor.sort.\($0.rawValue)", language), link: link(sort: $0),
                    current: $0 == query.sort)
            },
            rows: rows, flagged: all.filter { !($0.monitor?.flags.isEmpty ?? true) }.count,
            notShared: all.filter { $0.monitor == nil }.count)
    }

    func timeline(of patientID: UUID, in grant: StudyGrant, days: Int) async throws -> TimelineContent? {
        guard
            let (participant, entries) = try await StudyMonitor(database: database, services: services).timeline(
                of: patientID, in: grant, days: days)
        else { return nil }
        let display = viewer.dateDisplay
        let catalog = InstrumentCatalog(database: database, services: services)
        var titles: [String: String] = [:]
        for key in Set(entries.map(\.prompt.instrumentKey)) {
            titles[key] = try await catalog.title(of: key, in: language)
        }
        let base = ConsoleURL.monitorParticipant(study: grant.studyID, patient: patientID).path
        return TimelineContent(
            studyTitle: grant.study.titles.text(language),
            monitorLink: ConsoleURL.monitor(study: grant.studyID).path + "?days=\(days)",
            pseudonym: participant.pseudonym, days: days,
            periods: StudyMonitor.periods.map {
                Link(label: period($0), link: base + "?days=\($0)", current: $0 == days)
            },
            entries: entries.map { entry in
                Entry(
                    instrument: titles[entry.prompt.instrumentKey] ?? entry.prompt.instrumentKey,
                    opens: display.dateTime(entry.prompt.opensAt), closes: display.dateTime(entry.prompt.closesAt),
                    outcome: localizer.text("promptOutcome.\(entry.outcome.rawValue)", language),
                    reason: entry.reason.map { localizer.text("promptOutcome.reason.\($0.rawValue)", language) },
                    opened: entry.prompt.openedAt.map(display.dateTime),
                    submitted: entry.prompt.completedAt.map(display.dateTime),
                    quality: entry.qualityFlags.map { localizer.text("responseQuality.\($0.rawValue)", language) },
                    notifications: entry.notifications.map { notification(of: $0, display: display) })
            })
    }

    private func notification(of record: NotificationRecord, display: DateDisplay) -> NotificationView {
        NotificationView(
            due: display.dateTime(record.dueAt),
            status: localizer.text("notificationStatus.\(record.status.rawValue)", language),
            channel: record.channel ?? "–",
            reason: record.miss.map { localizer.text("promptOutcome.reason.\($0.rawValue)", language) } ?? "",
            attempts: NotificationAttempt.log(record.attemptLog).map {
                "\(display.dateTime($0.at)): \($0.channel.rawValue) – "
                    + localizer.text("notificationAttempt.\($0.outcome.rawValue)", language) + " (\($0.detail))"
            })
    }

    private func sorted(_ rows: [StudyMonitor.Row], by sort: Query.Sort) -> [StudyMonitor.Row] {
        switch sort {
        case .pseudonym: rows.sorted { $0.participant.pseudonym < $1.participant.pseudonym }
        case .lastSeen:
            rows.sorted {
                ($0.monitor?.lastSeen ?? .distantFuture, $0.participant.pseudonym)
                    < ($1.monitor?.lastSeen ?? .distantFuture, $1.participant.pseudonym)
            }
        case .flags:
            rows.sorted {
                (-($0.monitor?.flags.count ?? -1), -($0.monitor?.missedInRow ?? 0), $0.participant.pseudonym)
                    < (-($1.monitor?.flags.count ?? -1), -($1.monitor?.missedInRow ?? 0), $1.participant.pseudonym)
            }
        }
    }

    private func label(_ flag: ParticipantMonitor.Flag) -> String {
        localizer.text("console.monitor.flag.\(flag.rawValue)", language)
    }

    private func period(_ days: Int) -> String {
        localizer.text("console.monitor.period", count: days, language)
    }

    /// A median time in the units people use; a dash where there is none.
    private func duration(_ seconds: TimeInterval?) -> String {
        guard let seconds else { return "–" }
        return localizer.duration(minutes: Int((seconds / 60).rounded()), language)
    }
}
