import Fluent
import Foundation
import InterludeCore

/// The session report as the console shows and prints it: the scores over the period as charts with the pinned
/// notes marked on them, and the rest as tables and lists.
struct ReportPages: Sendable {
    enum Outcome: String, Sendable, Encodable {
        case pinned
        case unpinned
    }

    struct Content: Encodable, Sendable {
        let action: String
        let notesAction: String
        let patientLink: String
        let pseudonym: String
        let name: String?
        let from: String
        let to: String
        let period: String
        let charts: [PatientResults.Chart]
        let momentary: [MomentaryView]
        let notable: [NotableRow]
        let alerts: [AlertRow]
        let compliance: ComplianceView
        let events: [EventRow]
        let notes: [NoteRow]
        let outcome: Outcome?
        let draft: Draft
        let noteErrors: FormErrors
        let periodErrors: FormErrors
    }

    struct MomentaryView: Encodable, Sendable {
        let title: String
        let summary: String
        let items: [SpreadRow]
    }

    struct SpreadRow: Encodable, Sendable {
        let title: String
        let count: Int
        let mean: String
        let range: String
    }

    struct NotableRow: Encodable, Sendable {
        let when: String
        let instrument: String
        let title: String
        let value: String
        let link: String
    }

    struct AlertRow: Encodable, Sendable {
        let when: String
        let priority: String
        let high: Bool
        let reason: String
        let acknowledged: String?
    }

    struct ComplianceView: Encodable, Sendable {
        let answered: Int
        let missed: Int
        let open: Int
        let percent: String
    }

    struct EventRow: Encodable, Sendable {
        let when: String
        let kind: String
        let title: String
    }

    struct NoteRow: Encodable, Sendable {
        let day: String
        let text: String
        let author: String?
        let deleteAction: String
    }

    struct Draft: Encodable, Sendable {
        let day: String
        let text: String
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        services.localizer.text(key, language, arguments)
    }

    func page(
        _ report: SessionReportService.Report, outcome: Outcome?, draft: Draft, noteErrors: FormErrors,
        periodErrors: FormErrors
    ) async throws -> Content {
        let chart = report.chart
        let zone = chart.patient.zone
        let display = DateDisplay(language: language, timeZone: zone)
        let patientID = chart.patientID
        let noon = LocalTime(minutes: 12 * 60)!
        let notes = report.notes.sorted { $0.day < $1.day }
        let timeline = ScoreChart.Timeline(
            span: report.period.instants.lowerBound...report.period.instants.upperBound,
            markers: notes.map {
                ScoreChart.Marker(date: LocalDateTime(date: $0.day, time: noon).instant(in: zone), label: $0.text)
            })
        let definitions = try await InstrumentCatalog(database: database, services: services).definitions(
            Set(
                report.responses.map {
                    InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion)
                }))
        let results = PatientResults(
            language: language, display: display, localizer: services.localizer, timeline: timeline)
        let charts = results.sections(report.responses, definitions: definitions).flatMap { section in
            section.charts.map { PatientResults.Chart(title: "\(section.title): \($0.title)", svg: $0.svg) }
        }
        let lastDay = report.period.instants.upperBound.addingTimeInterval(-1)
        let told = try await AlertWording(database: database, services: services, language: language, display: display)
            .tell(report.alerts.map(\.record))
        return Content(
            action: ConsoleURL.report(patient: patientID).path, notesAction: ConsoleURL.notes(patient: patientID).path,
            patientLink: ConsoleURL.patient(patientID).path, pseudonym: chart.profile.pseudonym, name: chart.shownName,
            from: report.period.from.description, to: report.period.to.description,
            period: text(
                "console.report.period",
                ["from": display.date(report.period.instants.lowerBound), "to": display.date(lastDay)]),
            charts: charts,
            momentary: report.momentary.map { momentary in
                MomentaryView(
                    title: momentary.title,
                    summary: text(
                        "console.report.momentarySummary",
                        ["answered": "\(momentary.answered)", "missed": "\(momentary.missed)"]),
                    items: momentary.items.map {
                        SpreadRow(
                            title: $0.title, count: $0.spread.count, mean: $0.spread.mean.plainText(),
                            range: "\($0.spread.min.plainText())–\($0.spread.max.plainText())")
                    })
            },
            notable: report.notable.map { notable in
                let (title, value) =
                    switch notable.reason {
                    case .crisisItem(let question, let answer): (question, answer)
                    case .rule(let name, let reason): (name, reason)
                    }
                return NotableRow(
                    when: display.dateTime(notable.at), instrument: notable.instrumentTitle, title: title, value: value,
                    link: ConsoleURL.response(patient: patientID, response: notable.responseID).path)
            },
            alerts: report.alerts.map { alert in
                AlertRow(
                    when: display.dateTime(alert.record.createdAt),
                    priority: text("alert.priority.\(alert.record.priority.rawValue)"),
                    high: alert.record.priority == .high,
                    reason: alert.record.id.flatMap { told[$0] }.map {
                        ([$0.message] + $0.facts).joined(separator: " ")
                    } ?? alert.reason,
                    acknowledged: alert.record.acknowledgedAt.map { display.dateTime($0) })
            },
            compliance: ComplianceView(
                answered: report.compliance.completed, missed: report.compliance.expired, open: report.compliance.open,
                percent: report.compliance.percent.map { "\($0) %" } ?? "–"),
            events: report.events.map {
                EventRow(
                    when: display.dateTime($0.at), kind: text("console.report.event.\($0.kind.rawValue)"),
                    title: $0.title)
            },
            notes: notes.map { note in
                NoteRow(
                    day: display.date(LocalDateTime(date: note.day, time: noon).instant(in: zone)), text: note.text,
                    author: note.authorName, deleteAction: ConsoleURL.deleteNote(patient: patientID, note: note.id).path
                )
            },
            outcome: outcome, draft: draft, noteErrors: noteErrors, periodErrors: periodErrors)
    }
}
