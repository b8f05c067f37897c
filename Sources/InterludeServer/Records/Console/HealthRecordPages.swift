import Fluent
import Foundation
import InterludeCore

/// The health record on the therapist's console: the events as a timeline with the questionnaires' scores drawn on
/// the same time axis and the events marked on it, the therapies with the ongoing ones first, and each audiogram
/// drawn beside the one before it with its thresholds as a table. Every read goes through the patient's chart.
struct HealthRecordPages: Sendable {
    struct Content: Encodable, Sendable {
        let id: String
        let patientLink: String
        let pseudonym: String
        let name: String?
        let events: [EventRow]
        let charts: [PatientResults.Chart]
        let therapies: [TherapyRow]
        let audiograms: [AudiogramView]
    }

    struct EventRow: Encodable, Sendable {
        let when: String
        let type: String
        let title: String
        let description: String?
    }

    struct TherapyRow: Encodable, Sendable {
        let name: String
        let type: String
        let period: String
        let ongoing: Bool
        let note: String?
    }

    struct AudiogramView: Encodable, Sendable {
        let id: String
        let date: String
        let svg: String
        let summary: String
        let columns: [String]
        let rows: [ThresholdRow]
    }

    struct ThresholdRow: Encodable, Sendable {
        let frequency: String
        let levels: [String]
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }
    private var localizer: Localizer { services.localizer }

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        localizer.text(key, language, arguments)
    }

    func record(_ chart: PatientChart) async throws -> Content {
        let patient = try await chart.overview()
        let zone = patient.patient.zone
        let display = DateDisplay(language: language, timeZone: zone)
        let events = try await chart.records(HealthEvent.self).map(\.content)
        let therapies = try await chart.records(Therapy.self).map(\.content)
        let audiograms = try await chart.records(Audiogram.self).map(\.content).sorted { $0.measuredAt < $1.measuredAt }
        return Content(
            id: chart.patientID.uuidString, patientLink: ConsoleURL.patient(chart.patientID).path,
            pseudonym: patient.profile.pseudonym,
            name: chart.showsIdentity ? patient.patient.name : nil,
            events: events.map { event in
                EventRow(
                    when: display.dateTime(event.occurredAt), type: eventType(event.type), title: event.title,
                    description: event.description)
            },
            charts: try await scoreCharts(chart, events: events, display: display),
            therapies: Therapy.ordered(therapies, on: LocalDate(services.clock.now, in: zone)).map { therapy in
                TherapyRow(
                    name: therapy.name, type: text("therapy.kind.\(therapy.kind.rawValue)"),
                    period: therapy.endDate.map {
                        text("app.therapies.span", ["start": display.date(therapy.startDate), "end": display.date($0)])
                    } ?? text("app.therapies.since", ["start": display.date(therapy.startDate)]),
                    ongoing: therapy.isOngoing(on: LocalDate(services.clock.now, in: zone)), note: therapy.note)
            },
            audiograms: audiograms.enumerated().reversed().map { index, audiogram in
                view(audiogram, earlier: index > 0 ? audiograms[index - 1] : nil, display: display, index: index)
            })
    }

    /// The built-in types by name in the viewer's language; a type a study added as it was written.
    private func eventType(_ type: String) -> String {
        HealthEvent.BuiltInType(rawValue: type).map { text("event.type.\($0.rawValue)") } ?? type
    }

    /// The score charts of the patient's questionnaires on one time axis from the first event or answer until now,
    /// every event marked.
    private func scoreCharts(_ chart: PatientChart, events: [HealthEvent], display: DateDisplay) async throws
        -> [PatientResults.Chart]
    {
        let responses = try await chart.responses()
        let moments = events.map(\.occurredAt) + responses.map(\.record.completedAt)
        guard let start = moments.min(), !responses.isEmpty else { return [] }
        let end = max(services.clock.now, moments.max()!)
        let definitions = try await InstrumentCatalog(database: database, services: services).definitions(
            Set(
                responses.map {
                    InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion)
                }))
        let timeline = ScoreChart.Timeline(
            span: start...end,
            markers: events.sorted { $0.occurredAt < $1.occurredAt }.map {
                ScoreChart.Marker(date: $0.occurredAt, label: "\(eventType($0.type)): \($0.title)")
            })
        let results = PatientResults(language: language, display: display, localizer: localizer, timeline: timeline)
        return results.sections(responses, definitions: definitions).flatMap { section in
            section.charts.map { PatientResults.Chart(title: "\(section.title): \($0.title)", svg: $0.svg) }
        }
    }

    private func view(_ audiogram: Audiogram, earlier: Audiogram?, display: DateDisplay, index: Int) -> AudiogramView {
        let chart = AudiogramChart(
            audiogram: audiogram, earlier: earlier, ears: .both, localizer: localizer, language: language,
            display: display,
            id: "audiogram-\(index)")
        var columns: [(Audiogram.Ear, Audiogram.Conduction)] = []
        for conduction in Audiogram.Conduction.allCases {
            for ear in Audiogram.Ear.allCases
            where audiogram.points.contains(where: { $0.ear == ear && $0.conduction == conduction }) {
                columns.append((ear, conduction))
            }
        }
        let frequencies = Set(audiogram.points.map(\.frequencyHz)).sorted()
        return AudiogramView(
            id: "audiogram-\(index)", date: display.date(audiogram.measuredAt), svg: chart.svg,
            summary: chart.description,
            columns: columns.map {
                "\(text("audiogram.ear.\($0.0.rawValue)")), \(text("audiogram.conduction.\($0.1.rawValue)"))"
            },
            rows: frequencies.map { frequency in
                ThresholdRow(
                    frequency: "\(frequency) Hz",
                    levels: columns.map { ear, conduction in
                        guard
                            let point = audiogram.points.first(where: {
                                $0.ear == ear && $0.conduction == conduction && $0.frequencyHz == frequency
                            })
                        else { return "" }
                        let level = point.thresholdDbHL.map(String.init) ?? text("audiogram.no_response")
                        return point.masked ? "\(level) (\(text("app.audiograms.masked")))" : level
                    })
            })
    }
}
