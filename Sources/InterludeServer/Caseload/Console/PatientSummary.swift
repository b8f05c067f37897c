import Foundation
import InterludeCore

/// The first screen of a patient's chart, in the therapist's words: the latest score of each questionnaire with its
/// band, its direction and a sparkline over the therapy so far; the share answered over the last days; what is open
/// and what was missed lately.
struct PatientSummary: Sendable {
    struct ScoreRow: Encodable, Sendable {
        var instrument: String
        var score: String
        var value: String
        var band: String?
        /// "up 3 since 12 Nov 2026", "unchanged since …", "first value".
        var trend: String
        var when: String
        var link: String
        var sparkline: String
    }

    struct ComplianceWindow: Encodable, Sendable {
        var label: String
        var compliance: CaseloadPages.ComplianceCell
    }

    struct PromptLine: Encodable, Sendable {
        var title: String
        var when: String
    }

    /// The windows the share answered is shown for, in days.
    static let complianceDays = [7, 28]
    /// Questionnaires missed this many days back are listed on the first screen.
    static let missedDays = 7

    let language: Language
    let display: DateDisplay
    let localizer: Localizer
    let now: Date

    /// One row per score of each questionnaire answered, the most recently answered questionnaire first.
    func scores(
        _ responses: [ResponseService.Stored], definitions: [InstrumentVersionKey: InstrumentDefinition],
        patientID: UUID
    ) -> [ScoreRow] {
        var order: [String] = []
        var grouped: [String: [ResponseService.Stored]] = [:]
        for response in responses.sorted(by: { $0.record.completedAt > $1.record.completedAt }) {
            let key = response.record.instrumentKey
            if grouped[key] == nil { order.append(key) }
            grouped[key, default: []].append(response)
        }
        return order.flatMap { key -> [ScoreRow] in
            let group = grouped[key]!
            let newest = group[0]
            guard let definition = definitions[InstrumentVersionKey(key: key, version: newest.record.instrumentVersion)]
            else { return [] }
            return definition.scores.enumerated().compactMap { index, rule -> ScoreRow? in
                let values = group.compactMap { response -> (response: ResponseService.Stored, value: Double)? in
                    guard let value = response.scores.first(where: { $0.id == rule.id })?.value else { return nil }
                    return (response, value)
                }
                guard let latest = values.first else { return nil }
                let range =
                    definition.range(of: rule)
                    ?? (values.map(\.value).min()!...max(values.map(\.value).max()!, values.map(\.value).min()! + 1))
                let chart = ScoreChart(
                    title: "\(definition.title.text(language)): \(rule.title.text(language))",
                    points: values.map { ScoreChart.Point(date: $0.response.record.completedAt, value: $0.value) },
                    bands: rule.bands, range: range, resolution: rule.resolution, display: display, language: language,
                    id: "spark-\(key)-\(index)")
                return ScoreRow(
                    instrument: definition.title.text(language), score: rule.title.text(language),
                    value: latest.value.plainText(),
                    band: latest.response.scores.first { $0.id == rule.id }?.band?.label.text(language),
                    trend: trend(latest.value, before: values.dropFirst().first),
                    when: display.date(latest.response.record.completedAt),
                    link: ConsoleURL.response(patient: patientID, response: latest.response.record.id!).path,
                    sparkline: chart.sparkline)
            }
        }
    }

    private func trend(_ latest: Double, before: (response: ResponseService.Stored, value: Double)?) -> String {
        guard let before else { return localizer.text("console.summary.trendFirst", language) }
        let since = display.date(before.response.record.completedAt)
        let delta = latest - before.value
        if delta == 0 { return localizer.text("console.summary.trendSame", language, ["date": since]) }
        return localizer.text(
            delta > 0 ? "console.summary.trendUp" : "console.summary.trendDown", language,
            ["delta": abs(delta).plainText(), "date": since])
    }

    /// Prompts answered, missed and open among those that opened in each of the last windows of days.
    func compliance(_ prompts: [PromptService.Current]) -> [ComplianceWindow] {
        Self.complianceDays.map { days in
            let since = now.addingTimeInterval(-Double(days) * 86_400)
            var counted = PromptService.Compliance()
            for prompt in prompts where prompt.opensAt > since && prompt.opensAt <= now { counted.count(prompt.status) }
            return ComplianceWindow(
                label: localizer.text("console.summary.lastDays", count: days, language),
                compliance: CaseloadPages.ComplianceCell(counted))
        }
    }

    /// The questionnaires open now, the one closing first first.
    func open(_ prompts: [PromptService.Current], titles: (PromptService.Current) -> String) -> [PromptLine] {
        prompts.filter { $0.status == .open }.sorted { $0.closesAt < $1.closesAt }.map { prompt in
            PromptLine(
                title: titles(prompt),
                when: localizer.text(
                    "console.summary.openUntil", language, ["date": display.dayDateTime(prompt.closesAt)]))
        }
    }

    /// The questionnaires that closed unanswered in the last days, one line each with how often and when last, the
    /// most recently missed first.
    func missed(_ prompts: [PromptService.Current], titles: (PromptService.Current) -> String) -> [PromptLine] {
        let since = now.addingTimeInterval(-Double(Self.missedDays) * 86_400)
        var order: [String] = []
        var missed: [String: (count: Int, last: Date)] = [:]
        for prompt in prompts.filter({ $0.status == .expired && $0.closesAt > since }).sorted(by: {
            $0.closesAt > $1.closesAt
        }) {
            let title = titles(prompt)
            if missed[title] == nil { order.append(title) }
            missed[title] = (count: (missed[title]?.count ?? 0) + 1, last: missed[title]?.last ?? prompt.closesAt)
        }
        return order.map { title in
            PromptLine(
                title: title,
                when: localizer.text(
                    "console.summary.missed", count: missed[title]!.count, language,
                    ["date": display.dayDateTime(missed[title]!.last)]))
        }
    }
}
