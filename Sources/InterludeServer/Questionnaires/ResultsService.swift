import Fluent
import Foundation
import InterludeCore

/// A person's own results over time, per instrument: each score and each numeric item as points, how many
/// answers and missed prompts the period holds, and whether the instrument is asked several times a day.
struct ResultsService: Sendable {
    let database: any Database
    let services: AppServices

    struct Point: Sendable {
        let at: Date
        let value: Double
        let band: Band?
    }

    struct Series: Sendable {
        let id: String
        let title: String
        /// The lowest and highest value the score or item can take, when it has such bounds.
        let range: ClosedRange<Double>?
        /// Answers of yes (1) or no (0) to one question: shown as marks, not as a line.
        let yesNo: Bool
        var points: [Point]
    }

    struct Instrument: Sendable {
        let key: String
        let title: String
        var scores: [Series]
        var items: [Series]
        var answered: Int
        var missed: Int
        /// Planned by random windows or fixed times: the app shows when in the week it was answered.
        var momentary: Bool
    }

    /// The person's results answered in `period` (all when nil), instruments in the order first answered.
    func results(of patientID: UUID, in period: Range<Date>? = nil, language: Language) async throws -> [Instrument] {
        let responses = try await ResponseService(database: database, services: services).responses(of: patientID)
        let prompts = try await PromptRecord.query(on: database).filter(\.$patient.$id == patientID).all()
        return try await results(responses, prompts: prompts, in: period, language: language)
    }

    /// The kinds of item whose answers are charted as a series.
    static let chartedItems: Set<ItemType> = [.slider, .scale, .number]

    /// The results of these responses (newest first, as read) and prompts answered or missed in `period`; the items of
    /// `itemTypes` each as a series.
    func results(
        _ responses: [ResponseService.Stored], prompts: [PromptRecord], in period: Range<Date>?, language: Language,
        itemTypes: Set<ItemType> = chartedItems
    ) async throws -> [Instrument] {
        let within = { (date: Date) in period.map { $0.contains(date) } ?? true }
        let responses = responses.filter { within($0.record.completedAt) }.reversed()
        let definitions = try await InstrumentCatalog(database: database, services: services).definitions(
            Set(
                responses.map {
                    InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion)
                }))
        let momentaryPlans = try await momentaryPlanIDs(Set(prompts.compactMap(\.planID)))
        var byKey: [String: Instrument] = [:]
        var order: [String] = []
        for stored in responses {
            let record = stored.record
            guard
                let definition = definitions[
                    InstrumentVersionKey(key: record.instrumentKey, version: record.instrumentVersion)]
            else { continue }
            if byKey[record.instrumentKey] == nil {
                order.append(record.instrumentKey)
                byKey[record.instrumentKey] = Instrument(
                    key: record.instrumentKey, title: definition.title.text(language), scores: [], items: [],
                    answered: 0,
                    missed: 0, momentary: false)
            }
            var instrument = byKey[record.instrumentKey]!
            instrument.answered += 1
            for score in stored.scores {
                guard let value = score.value else { continue }
                let rule = definition.scores.first { $0.id == score.id }
                let range = rule.flatMap(definition.range(of:))
                let oneQuestion = rule.flatMap { $0.items.count == 1 ? definition.item($0.items[0]) : nil }
                Self.add(
                    Point(at: record.completedAt, value: value, band: score.band), to: &instrument.scores,
                    as: Series(
                        id: score.id, title: rule?.title.text(language) ?? score.id, range: range,
                        yesNo: oneQuestion?.type == .boolean && range == 0...1, points: []))
            }
            for item in definition.items where itemTypes.contains(item.type) {
                guard let answer = stored.answers[item.id], let value = definition.numericValue(of: answer, for: item)
                else { continue }
                Self.add(
                    Point(at: record.completedAt, value: value, band: nil), to: &instrument.items,
                    as: Series(
                        id: item.id, title: item.text.text(language), range: definition.valueRange(of: item),
                        yesNo: item.type == .boolean, points: []))
            }
            byKey[record.instrumentKey] = instrument
        }
        for prompt in prompts where byKey[prompt.instrumentKey] != nil {
            let status = PromptStatus.at(
                services.clock.now, recorded: prompt.status, opensAt: prompt.opensAt, closesAt: prompt.closesAt)
            if status == .expired, within(prompt.closesAt) { byKey[prompt.instrumentKey]?.missed += 1 }
            if let planID = prompt.planID, momentaryPlans.contains(planID) {
                byKey[prompt.instrumentKey]?.momentary = true
            }
        }
        return order.compactMap { byKey[$0] }
    }

    /// Adds `point` to the series of `new`'s id, starting it from `new` when it is the first.
    private static func add(_ point: Point, to series: inout [Series], as new: Series) {
        if let index = series.firstIndex(where: { $0.id == new.id }) {
            series[index].points.append(point)
        } else {
            var started = new
            started.points = [point]
            series.append(started)
        }
    }

    /// The plans among `ids` that ask at random in windows or at fixed times of day.
    private func momentaryPlanIDs(_ ids: Set<UUID>) async throws -> Set<UUID> {
        guard !ids.isEmpty else { return [] }
        var momentary: Set<UUID> = []
        for plan in try await PlanRecord.query(on: database).filter(\.$id ~~ Array(ids)).all() {
            let definition = try JSONDecoder().decode(SchedulePlan.self, from: Data(plan.definition.utf8))
            switch definition.pattern {
            case .randomWindows, .fixedTimes: momentary.insert(try plan.requireID())
            default: break
            }
        }
        return momentary
    }
}
