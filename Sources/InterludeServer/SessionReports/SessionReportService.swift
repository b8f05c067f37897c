import Fluent
import Foundation
import InterludeCore

/// What a therapist takes into a session: for a chosen period, the client's scores and bands over time, the
/// momentary questionnaires summed up, answers that stand out, alerts, how many prompts were answered, what
/// happened, and the notes pinned to days. Read through the therapist's chart of the client, so every part is
/// audited and holds the practice's data only.
struct SessionReportService: Sendable {
    let database: any Database
    let services: AppServices

    struct Report: Sendable {
        let chart: PatientChart
        let period: DayPeriod
        /// The responses of the period, newest first.
        let responses: [ResponseService.Stored]
        let instruments: [ResultsService.Instrument]
        let momentary: [Momentary]
        let notable: [Notable]
        let alerts: [AlertService.Opened]
        let compliance: PromptService.Compliance
        let events: [Event]
        let notes: [PinnedNoteService.Shown]
    }

    /// A momentary questionnaire's numeric items over the period.
    struct Momentary: Sendable {
        let instrumentKey: String
        let title: String
        let answered: Int
        let missed: Int
        let items: [(id: String, title: String, spread: SessionReportRules.Spread)]
    }

    /// An answer that stands out: one that calls for crisis help, or one the practice's own rules picked out.
    struct Notable: Sendable {
        enum Reason: Sendable {
            case crisisItem(question: String, answer: String)
            case rule(name: String, reason: String)
        }

        let responseID: UUID
        let at: Date
        let instrumentTitle: String
        let reason: Reason
    }

    struct Event: Sendable {
        enum Kind: String, Sendable {
            case healthEvent
            case appointment
            case intervention
        }

        let at: Date
        let kind: Kind
        let title: String
    }

    /// The period a report covers unless the therapist chooses one: the last four weeks.
    static let defaultDays = 28

    func report(_ chart: PatientChart, period: DayPeriod, language: Language) async throws -> Report {
        let within = { (date: Date) in period.instants.contains(date) }
        let responses = try await chart.responses().filter { within($0.record.completedAt) }
        let prompts = try await chart.prompts().map(\.record)
        let results = ResultsService(database: database, services: services)
        let instruments = try await results.results(
            responses, prompts: prompts, in: period.instants, language: language)
        // A momentary questionnaire is often one of choices, like the Intersession Daily: their values are summed up too.
        let momentary = try await results.results(
            responses, prompts: prompts, in: period.instants, language: language,
            itemTypes: ResultsService.chartedItems.union([.single])
        ).filter(\.momentary).map { instrument in
            Momentary(
                instrumentKey: instrument.key, title: instrument.title, answered: instrument.answered,
                missed: instrument.missed,
                items: instrument.items.compactMap { series in
                    SessionReportRules.spread(series.points.map(\.value)).map { (series.id, series.title, $0) }
                })
        }
        var compliance = PromptService.Compliance()
        for prompt in prompts {
            let status = PromptStatus.at(
                services.clock.now, recorded: prompt.status, opensAt: prompt.opensAt, closesAt: prompt.closesAt)
            switch status {
            case .completed where within(prompt.completedAt ?? prompt.closesAt): compliance.completed += 1
            case .expired where within(prompt.closesAt): compliance.expired += 1
            case .open where within(prompt.opensAt) || within(services.clock.now): compliance.open += 1
            default: break
            }
        }
        return Report(
            chart: chart, period: period, responses: responses, instruments: instruments, momentary: momentary,
            notable: try await notable(in: responses, of: chart, language: language),
            alerts: try await chart.alerts().filter { within($0.record.createdAt) }, compliance: compliance,
            events: try await events(of: chart, within: within),
            notes: try await chart.notes(from: period.from, to: period.to))
    }

    private func notable(in responses: [ResponseService.Stored], of chart: PatientChart, language: Language)
        async throws
        -> [Notable]
    {
        let definitions = try await InstrumentCatalog(database: database, services: services).definitions(
            Set(
                responses.map {
                    InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion)
                }))
        let firings = Dictionary(
            grouping: try await chart.firings(on: try responses.map { try $0.record.requireID() }),
            by: { $0.record.responseID })
        let display = DateDisplay(language: language, timeZone: .gmt)
        let words = PatientResults(language: language, display: display, localizer: services.localizer)
        // What met each rule in the reader's words (the question's text, the answer given), as alerts tell it.
        let told = try await AlertWording(database: database, services: services, language: language, display: display)
            .tell(firings: firings.values.flatMap { $0 }.compactMap(\.record.id))
        var notable: [Notable] = []
        for stored in responses.reversed() {
            let record = stored.record
            let responseID = try record.requireID()
            guard
                let definition = definitions[
                    InstrumentVersionKey(key: record.instrumentKey, version: record.instrumentVersion)]
            else { continue }
            let note = { (reason: Notable.Reason) in
                Notable(
                    responseID: responseID, at: record.completedAt, instrumentTitle: definition.title.text(language),
                    reason: reason)
            }
            for itemID in SessionReportRules.crisisItems(in: stored.answers, of: definition) {
                guard let item = definition.items.first(where: { $0.id == itemID }), let answer = stored.answers[itemID]
                else { continue }
                notable.append(
                    note(
                        .crisisItem(
                            question: item.text.text(language),
                            answer: words.answerText(answer, for: item, in: definition))))
            }
            for firing in firings[responseID] ?? [] {
                let reason = firing.record.id.flatMap { told[$0]?.facts.joined(separator: " ") } ?? firing.reason
                notable.append(note(.rule(name: firing.record.ruleName, reason: reason)))
            }
        }
        return notable
    }

    private func events(of chart: PatientChart, within: (Date) -> Bool) async throws -> [Event] {
        let health = try await chart.records(HealthEvent.self).filter { within($0.content.occurredAt) }
            .map { Event(at: $0.content.occurredAt, kind: .healthEvent, title: $0.content.title) }
        let appointments = try await chart.appointments(includePast: true).filter { within($0.startsAt) }
            .map { Event(at: $0.startsAt, kind: .appointment, title: $0.title) }
        let interventions = try await chart.interventions().filter { within($0.deliverAt) }
            .map { Event(at: $0.deliverAt, kind: .intervention, title: $0.text) }
        return (health + appointments + interventions).sorted { $0.at < $1.at }
    }
}
