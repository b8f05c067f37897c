import Foundation
import InterludeCore

/// What a therapist sees of one patient's questionnaires: prompts, and per instrument the scores over time as
/// charts, the submissions as a table, and each response's answers in the instrument's order.
struct PatientResults: Sendable {
    struct PromptRow: Encodable, Sendable {
        var title: String
        var opensAt: String
        var closesAt: String
        var status: String
        var statusLabel: String
    }

    struct InstrumentSection: Encodable, Sendable {
        var key: String
        var title: String
        var charts: [Chart]
        var submissions: [SubmissionRow]
    }

    struct Chart: Encodable, Sendable {
        var title: String
        var svg: String
    }

    struct SubmissionRow: Encodable, Sendable {
        var responseID: String
        var instrument: String
        var completedAt: String
        var scores: [ScoreCell]
    }

    struct ScoreCell: Encodable, Sendable {
        var title: String
        var value: String
        var band: String?
    }

    struct AnswerRow: Encodable, Sendable {
        var section: String?
        var question: String
        var answer: String
    }

    let language: Language
    let display: DateDisplay
    let localizer: Localizer
    /// A time axis the score charts share with other records, when they are shown beside them.
    var timeline: ScoreChart.Timeline? = nil

    func prompts(_ prompts: [PromptService.Current], definitions: [InstrumentVersionKey: InstrumentDefinition])
        -> [PromptRow]
    {
        prompts.map { prompt in
            let record = prompt.record
            let title =
                definitions[InstrumentVersionKey(key: record.instrumentKey, version: record.instrumentVersion)]?
                .title.text(language) ?? record.instrumentKey
            return PromptRow(
                title: title, opensAt: display.dateTime(record.opensAt), closesAt: display.dateTime(record.closesAt),
                status: prompt.status.rawValue,
                statusLabel: localizer.text("promptStatus.\(prompt.status.rawValue)", language))
        }
    }

    /// One section per instrument, most recently answered first.
    func sections(_ responses: [ResponseService.Stored], definitions: [InstrumentVersionKey: InstrumentDefinition])
        -> [InstrumentSection]
    {
        var order: [String] = []
        var grouped: [String: [ResponseService.Stored]] = [:]
        for response in responses {
            let key = response.record.instrumentKey
            if grouped[key] == nil { order.append(key) }
            grouped[key, default: []].append(response)
        }
        return order.map { key in
            let group = grouped[key]!
            let newest = group.map { InstrumentVersionKey(key: key, version: $0.record.instrumentVersion) }.max {
                $0.version < $1.version
            }!
            let definition = definitions[newest]
            let charts: [Chart] = (definition?.scores ?? []).enumerated().compactMap { index, rule in
                let points = group.compactMap { response -> ScoreChart.Point? in
                    guard let value = response.scores.first(where: { $0.id == rule.id })?.value else { return nil }
                    return ScoreChart.Point(date: response.record.completedAt, value: value)
                }
                guard !points.isEmpty, let definition else { return nil }
                let range =
                    definition.range(of: rule)
                    ?? (points.map(\.value).min()!...max(points.map(\.value).max()!, points.map(\.value).min()! + 1))
                let chart = ScoreChart(
                    title: "\(definition.title.text(language)): \(rule.title.text(language))", points: points,
                    bands: rule.bands, range: range, resolution: rule.resolution, display: display, language: language,
                    id: "chart-\(key)-\(index)", timeline: timeline)
                return Chart(title: rule.title.text(language), svg: chart.svg)
            }
            return InstrumentSection(
                key: key, title: definition?.title.text(language) ?? key, charts: charts,
                submissions: group.map { submission($0, definitions: definitions) })
        }
    }

    /// One response as a row: when, which questionnaire, its scores with their bands.
    func submission(_ response: ResponseService.Stored, definitions: [InstrumentVersionKey: InstrumentDefinition])
        -> SubmissionRow
    {
        let definition = definitions[
            InstrumentVersionKey(key: response.record.instrumentKey, version: response.record.instrumentVersion)]
        return SubmissionRow(
            responseID: response.record.id!.uuidString,
            instrument: definition?.title.text(language) ?? response.record.instrumentKey,
            completedAt: display.dateTime(response.record.completedAt),
            scores: response.scores.map { score in
                let rule = definition?.scores.first { $0.id == score.id }
                return ScoreCell(
                    title: rule?.title.text(language) ?? score.id,
                    value: score.value.map { $0.plainText() } ?? "–", band: score.band?.label.text(language))
            })
    }

    /// The answers of one response in the order the questions were asked; hidden and unanswered ones left out.
    func answers(_ response: ResponseService.Stored, definition: InstrumentDefinition) -> [AnswerRow] {
        let visible = InstrumentLogic(definition).visibility(response.answers)
        var rows: [AnswerRow] = []
        for section in definition.sections where visible.sections.contains(section.id) {
            var first = true
            for item in section.items where item.type.takesAnswer && visible.items.contains(item.id) {
                guard let value = response.answers[item.id], InstrumentLogic.isAnswered(value) else { continue }
                rows.append(
                    AnswerRow(
                        section: first ? (section.title ?? section.description)?.text(language) : nil,
                        question: item.text.text(language), answer: answerText(value, for: item, in: definition)))
                first = false
            }
        }
        return rows
    }

    /// An answer in words: option labels, yes or no, a number with its unit.
    func answerText(_ value: AnswerValue, for item: Item, in definition: InstrumentDefinition) -> String {
        switch value {
        case .text(let code) where item.type == .single:
            return definition.options(of: item).first { $0.code == code }?.label.text(language) ?? code
        case .list(let codes):
            let options = definition.options(of: item)
            return codes.map { code in options.first { $0.code == code }?.label.text(language) ?? code }
                .joined(separator: ", ")
        case .bool(let flag):
            return localizer.text(flag ? "common.yes" : "common.no", language)
        case .number(let number):
            return number.plainText() + (item.unit.map { " \($0)" } ?? "")
        case .text(let text):
            return text
        }
    }
}
