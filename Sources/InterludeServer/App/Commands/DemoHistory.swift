import Fluent
import Foundation
import InterludeCore
import NIOConcurrencyHelpers

/// The demo's own clock: it stands weeks in the past and is moved forward while the history is written, so every
/// service stamps what it does with the moment it would have happened.
final class DemoClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    init(_ start: Date) {
        current = NIOLockedValueBox(start)
    }

    var now: Date { current.withLockedValue { $0 } }

    /// Moves to `instant`; time never runs backwards.
    func move(to instant: Date) {
        current.withLockedValue { $0 = max($0, instant) }
    }

    var wallClock: WallClock { WallClock({ self.now }, sleep: { self.move(to: self.now.addingTimeInterval($0)) }) }
}

/// Weeks of use written through the services a running installation uses: the planner and the message planner run
/// as time passes, people open and answer most of their prompts a while after they open and let some pass, read the
/// messages they get, and the rules fire on what they did.
struct DemoHistory: Sendable {
    /// Someone whose prompts are answered: how likely on a given day of the history, and what they answer.
    struct Person: Sendable {
        let user: UserRecord
        /// The chance to answer a prompt opening on `day` (0 is the first day of the history).
        let answerRate: @Sendable (_ day: Int) -> Double
        /// Answers to put in place of the plausible ones, given the prompt's instrument and how many days before
        /// the end it opened.
        var settled: @Sendable (_ instrumentKey: String, _ daysBeforeEnd: Int) -> Answers = { _, _ in [:] }
        /// The chance to open a message on the day it arrives.
        var readsMessages = 0.7
    }

    /// Something done at a moment of the history, as a person would do it in the app or the console.
    struct Event: Sendable {
        let at: Date
        let action: @Sendable () async throws -> Void
    }

    let database: any Database
    let services: AppServices
    let clock: DemoClock
    static let step: TimeInterval = 6 * 3600

    /// Walks from the clock's time to `end` in steps of six hours; `events` happen at their moments on the way.
    func run(until end: Date, people: [Person], events: [Event], seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let start = clock.now
        var scripted = events.sorted { $0.at < $1.at }
        var from = start
        try await plan(at: from)
        while from < end {
            let to = min(end, from.addingTimeInterval(Self.step))
            var due = scripted.filter { $0.at < to }
            scripted.removeAll { $0.at < to }
            for person in people {
                due += try await answers(of: person, openingIn: from..<to, before: end, start: start, random: &random)
                due += try await reading(of: person, arrivingIn: from..<to, before: end, random: &random)
            }
            for event in due.sorted(by: { $0.at < $1.at }) {
                clock.move(to: event.at)
                try await event.action()
            }
            clock.move(to: to)
            try await plan(at: to)
            from = to
        }
    }

    /// What the background jobs do at `instant`: plan and expire prompts, plan messages, fire the rules on missed ones.
    private func plan(at instant: Date) async throws {
        _ = try await Planner(database: database, services: services).runAll(now: instant)
        _ = try await MessagePlanner(database: database, services: services).run(now: instant)
        _ = try await RuleService(database: database, services: services)
            .evaluateMissed(since: instant.addingTimeInterval(-RuleService.missedLookBack))
    }

    /// The prompts of `person` opening in `window` that they answer: opened a while after they open, answered a
    /// couple of minutes later, inside the prompt's window and before the end.
    private func answers(
        of person: Person, openingIn window: Range<Date>, before end: Date, start: Date, random: inout SeededRandom
    ) async throws -> [Event] {
        let patientID = try person.user.requireID()
        let prompts = try await PromptRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$opensAt >= window.lowerBound).filter(\.$opensAt < window.upperBound)
            .filter(\.$status ~~ [PromptStatus.scheduled, PromptStatus.open])
            .sort(\.$opensAt).sort(\.$instrumentKey)
            .all()
        let catalog = InstrumentCatalog(database: database, services: services)
        let promptService = PromptService(database: database, services: services)
        let responses = ResponseService(database: database, services: services)
        var events: [Event] = []
        for prompt in prompts {
            let day = Int(prompt.opensAt.timeIntervalSince(start) / 86_400)
            let daysBeforeEnd = Int(end.timeIntervalSince(prompt.opensAt) / 86_400)
            let settled = person.settled(prompt.instrumentKey, daysBeforeEnd)
            // A one-time questionnaire holds back the study's others until it is answered, so nobody skips it.
            let certain = !settled.isEmpty || PromptService.isOneTime(prompt)
            guard random.chance(certain ? 1 : person.answerRate(day)) else { continue }
            let room = min(prompt.closesAt.timeIntervalSince(prompt.opensAt), 2 * 3600) - 300
            let opened = prompt.opensAt.addingTimeInterval(random.between(30, max(room, 60)))
            let answered = opened.addingTimeInterval(random.between(60, 240))
            guard answered < prompt.closesAt, answered < end,
                let definition = try await catalog.definition(prompt.instrumentKey, prompt.instrumentVersion),
                let promptID = prompt.id
            else { continue }
            var generator = PlausibleAnswers(random: SeededRandom(seed: random.next()))
            let answers = generator.answers(to: definition, at: answered).merging(settled) { _, chosen in chosen }
            let submission = ResponseService.Submission(
                id: UUID(), promptID: promptID, instrumentKey: prompt.instrumentKey, version: prompt.instrumentVersion,
                answers: answers, startedAt: opened, completedAt: answered)
            let user = person.user
            let clock = clock
            // The app shows a prompt held back by an unanswered one-time questionnaire without letting it be answered.
            events.append(
                Event(at: opened) {
                    let current = try await promptService.open(promptID, for: patientID)
                    guard try await promptService.blocked(among: [current], patientID: patientID).isEmpty else {
                        return
                    }
                    clock.move(to: answered)
                    _ = try await responses.submit(submission, patient: user)
                })
        }
        return events
    }

    /// The messages arriving for `person` in `window` that they open, a while after each arrives.
    private func reading(
        of person: Person, arrivingIn window: Range<Date>, before end: Date, random: inout SeededRandom
    ) async throws -> [Event] {
        let interventions = try await InterventionRecord.query(on: database)
            .filter(\.$patient.$id == person.user.requireID())
            .filter(\.$deliverAt >= window.lowerBound).filter(\.$deliverAt < window.upperBound)
            .filter(\.$origin == InterventionOrigin.messagePlan)
            .sort(\.$deliverAt)
            .all()
        let service = InterventionService(database: database, services: services)
        let user = person.user
        return interventions.compactMap { message in
            let at = message.deliverAt.addingTimeInterval(random.between(5, 180) * 60)
            guard random.chance(person.readsMessages), at < end, let id = message.id else { return nil }
            return Event(at: at) { _ = try await service.markSeen(id, by: user) }
        }
    }
}
