import Fluent
import Foundation
import InterludeCore

/// An alert told in the words of the staff member who reads it: what the patient answered to which question, which
/// score reached which band, or how many questionnaires went unanswered and when the last was due; with where to look.
/// Only for alerts whose reason the reader may see.
struct AlertWording: Sendable {
    let database: any Database
    let services: AppServices
    let language: Language
    let display: DateDisplay

    struct Told: Sendable {
        /// The rule's own message (the built-in one in the reader's language).
        var message: String
        /// What happened, a sentence each.
        var facts: [String]
        /// The answers that raised it, or the patient's questionnaires, and the words of that link.
        var link: String
        var linkLabelKey: String
    }

    private var localizer: Localizer { services.localizer }

    /// Each alert raised by a rule, told; those the rule or response of are gone keep their stored reason.
    func tell(_ alerts: [AlertRecord]) async throws -> [UUID: Told] {
        let told = try await tell(firings: alerts.compactMap(\.firingID))
        var byAlert: [UUID: Told] = [:]
        for alert in alerts {
            if let alertID = alert.id, let firingID = alert.firingID, let words = told[firingID] {
                byAlert[alertID] = words
            }
        }
        return byAlert
    }

    /// Each firing of a rule, told, by the firing's id; the message is the alert's, or the rule's name for a rule that
    /// sends something.
    func tell(firings firingIDs: [UUID]) async throws -> [UUID: Told] {
        guard !firingIDs.isEmpty else { return [:] }
        let firings = try await RuleFiringRecord.query(on: database).filter(\.$id ~~ firingIDs).all()
        let ruleIDs = Set(firings.compactMap(\.ruleID))
        var rules: [UUID: StudyRule] = [:]
        for record in try await RuleRecord.query(on: database).filter(\.$id ~~ Array(ruleIDs)).all() {
            if let id = record.id {
                rules[id] = try? JSONDecoder().decode(StudyRule.self, from: Data(record.definition.utf8))
            }
        }
        var told: [UUID: Told] = [:]
        for firing in firings {
            guard let firingID = firing.id else { continue }
            let rule =
                firing.ruleID.map { rules[$0] }
                ?? (firing.ruleName == StudyRule.phq9Item9.name ? StudyRule.phq9Item9 : nil)
            guard let rule else { continue }
            var shownMessage = rule.name
            if case .alert(_, let message) = rule.action {
                shownMessage = firing.ruleID == nil ? localizer.text("alert.builtIn.phq9Item9", language) : message
            }
            switch rule.trigger {
            case .submitted:
                guard let responseID = firing.responseID, let facts = try await answered(rule, responseID: responseID)
                else { continue }
                told[firingID] = Told(
                    message: shownMessage, facts: facts,
                    link: ConsoleURL.response(patient: firing.$patient.id, response: responseID).path,
                    linkLabelKey: "alert.openAnswers")
            case .missedInARow(let count, let instrumentKey):
                told[firingID] = Told(
                    message: shownMessage, facts: [try await missed(count, of: instrumentKey, firing: firing)],
                    link: ConsoleURL.patient(firing.$patient.id).path + "#prompts", linkLabelKey: "alert.openPrompts")
            }
        }
        return told
    }

    /// "Answered “several days” to “Thoughts that you would be better off dead…”", a line for each clause met.
    private func answered(_ rule: StudyRule, responseID: UUID) async throws -> [String]? {
        guard let record = try await ResponseRecord.find(responseID, on: database),
            let definition = try await InstrumentCatalog(database: database, services: services)
                .definition(record.instrumentKey, record.instrumentVersion)
        else { return nil }
        let stored = try ResponseService(database: database, services: services).open(record)
        let facts = ResponseFacts(definition: definition, answers: stored.answers, scores: stored.scores)
        let words = PatientResults(language: language, display: display, localizer: localizer)
        let lines = rule.metClauses(facts).compactMap { clause -> String? in
            switch clause.subject {
            case .item:
                guard let item = definition.item(clause.id), let answer = stored.answers[clause.id] else { return nil }
                return localizer.text(
                    "alert.answered", language,
                    [
                        "answer": words.answerText(answer, for: item, in: definition),
                        "question": item.text.text(language),
                    ])
            case .score, .band:
                guard let rule = definition.scores.first(where: { $0.id == clause.id }),
                    let result = stored.scores.first(where: { $0.id == clause.id }), let value = result.value
                else { return nil }
                let band = result.band.map { " (\($0.label.text(language)))" } ?? ""
                return localizer.text(
                    "alert.scored", language,
                    [
                        "score": rule.title.text(language), "value": value.plainText(), "band": band,
                    ])
            }
        }
        return lines.isEmpty ? nil : lines
    }

    /// "Three Daily questionnaires in a row not answered, the last due on Monday, 3 March 2026, 20:00."
    private func missed(_ count: Int, of instrumentKey: String?, firing: RuleFiringRecord) async throws -> String {
        var last = PromptRecord.query(on: database)
            .filter(\.$patient.$id == firing.$patient.id).filter(\.$status == PromptStatus.expired)
            .filter(\.$closesAt <= firing.createdAt)
        if let studyID = firing.studyID { last = last.filter(\.$study.$id == studyID) }
        if let instrumentKey { last = last.filter(\.$instrumentKey == instrumentKey) }
        let prompt = try await last.sort(\.$closesAt, .descending).first()
        var name = localizer.text("alert.missed.anyQuestionnaire", language)
        if let prompt, instrumentKey != nil,
            let definition = try await InstrumentCatalog(database: database, services: services)
                .definition(prompt.instrumentKey, prompt.instrumentVersion)
        {
            name = definition.title.text(language)
        }
        return localizer.text(
            "alert.missed", count: count, language,
            [
                "questionnaire": name, "date": prompt.map { display.dayDateTime($0.closesAt) } ?? "",
            ])
    }
}
