import Fluent
import Foundation
import InterludeCore

/// A study's rules page, built from a grant without a request: its rules in words, the rule form with a dry run,
/// the firing log, the intervention templates, and the message pool with its plan.
struct RulesPages: Sendable {
    struct RuleRow: Encodable, Sendable {
        var id: String
        var name: String
        var summary: String
    }

    struct FiringRow: Encodable, Sendable {
        var at: String
        var rule: String
        var participant: String
        var reason: String
        var outcome: String
    }

    struct DryRunRow: Encodable, Sendable {
        var at: String
        var fires: Bool
        var reason: String
    }

    /// A template or message: its text in the viewer's language, and in the other one where it has both.
    struct TextRow: Encodable, Sendable {
        var id: String
        var label: String
        var text: String
        var other: String?
        var otherLanguage: String?

        init(id: String, label: String, texts: LocalizedText, language: Language) {
            self.id = id
            self.label = label
            self.text = texts.text(language)
            let other = Language.allCases.first {
                $0 != language && texts.values[$0] != nil && texts.values[language] != nil
            }
            self.other = other.flatMap { texts.values[$0] }
            self.otherLanguage = other?.rawValue
        }
    }

    /// One clause row of the form, as sent or empty: the question or score chosen from the questionnaire's lists.
    struct ClauseRow: Encodable, Sendable {
        var index: Int
        var subjects: [SelectOption]
        var id: String
        var targets: RuleTargets
        var operators: [SelectOption]
        var value: String
    }

    /// What a rule about one questionnaire can look at: its questions by their text, its scores by name, and the
    /// bands of its scores by name.
    struct RuleTargets: Encodable, Sendable {
        var instrumentKey: String
        var questions: [SelectOption]
        var scores: [SelectOption]
        var bands: [SelectOption]
    }

    struct RulesContent: Encodable, Sendable {
        var studyID: String
        var studyTitle: String
        var canEdit: Bool
        var rules: [RuleRow]
        var hasRules: Bool
        var form: RuleForm
        var clauses: [ClauseRow]
        var errors: FormErrors
        var added: Bool
        var instruments: [SelectOption]
        /// Every questionnaire's lists, for the page to offer those of the one chosen.
        var targets: [RuleTargets]
        var participants: [SelectOption]
        var dryRun: [DryRunRow]
        var triedDryRun: Bool
        var firings: [FiringRow]
        var hasFirings: Bool
        var templates: [TextRow]
        var templateErrors: FormErrors
        var kinds: [SelectOption]
        var messages: [TextRow]
        var messageErrors: FormErrors
        var plan: ConsoleRulesController.PlanForm
        var hasPlan: Bool
        var planErrors: FormErrors
    }

    /// What the page shows besides the study: a form being corrected, a dry run, problems next to their form.
    struct State: Sendable {
        var form: RuleForm?
        var errors = FormErrors()
        var dryRun: [DryRunRow]?
        var templateErrors = FormErrors()
        var messageErrors = FormErrors()
        var plan: ConsoleRulesController.PlanForm?
        var planErrors = FormErrors()
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }
    private var localizer: Localizer { services.localizer }

    func rules(_ grant: StudyGrant, added: Bool, state: State) async throws -> RulesContent {
        let studyID = grant.studyID
        let display = viewer.dateDisplay
        let study = grant.study
        let rules = RuleService(database: database, services: services)
        let stored = try await rules.rules(in: grant)
        let catalog = InstrumentCatalog(database: database, services: services)
        var titles: [String: String] = [:]
        let usable = try await catalog.overview().filter { $0.isUsable(in: grant.studyID) }
        for record in usable { titles[record.key] = record.title(in: language) }
        let definitions = try await catalog.definitions(
            Set(usable.map { InstrumentVersionKey(key: $0.key, version: $0.version) }))
        let targets = definitions.values.sorted { $0.key < $1.key }.map(ruleTargets)
        let candidates = try await rules.dryRunCandidates(in: grant)
        let firings = grant.allows(.viewFirings) ? try await rules.firings(in: grant) : []
        let library = try await InterventionLibrary(database: database, services: services).contents(of: studyID)
        let withheld = localizer.text("alert.withheld", language)
        let told = try await AlertWording(database: database, services: services, language: language, display: display)
            .tell(firings: firings.filter { $0.reason != nil }.compactMap(\.record.id))
        let form = state.form ?? RuleForm()
        return RulesContent(
            studyID: studyID.uuidString, studyTitle: study.titles.text(language),
            canEdit: grant.allows(.editRules),
            rules: stored.map {
                RuleRow(
                    id: $0.id?.uuidString ?? "", name: $0.rule.name,
                    summary: summary(of: $0.rule, titles: titles, targets: targets))
            },
            hasRules: !stored.isEmpty, form: form,
            clauses: clauseRows(form, targets: targets), errors: state.errors, added: added,
            instruments: titles.keys.sorted().map {
                SelectOption(value: $0, label: titles[$0] ?? $0, selected: $0 == form.instrumentKey)
            },
            targets: targets,
            participants: candidates.map {
                SelectOption(value: $0.patientID.uuidString, label: $0.pseudonym, selected: false)
            },
            dryRun: state.dryRun ?? [], triedDryRun: state.dryRun != nil,
            firings: firings.map {
                FiringRow(
                    at: display.dateTime($0.record.createdAt), rule: $0.record.ruleName,
                    participant: $0.pseudonym ?? "–",
                    reason: $0.record.id.flatMap { told[$0]?.facts.joined(separator: " ") } ?? $0.reason ?? withheld,
                    outcome: localizer.text(
                        "console.rules.outcome.\(FiringOutcome(stored: $0.record.outcome).rawValue)", language))
            },
            hasFirings: !firings.isEmpty,
            templates: library.templates.map {
                TextRow(
                    id: $0.id?.uuidString ?? "",
                    label: localizer.text("intervention.kind.\($0.kind.rawValue)", language),
                    texts: $0.texts, language: language)
            },
            templateErrors: state.templateErrors,
            kinds: InterventionKind.written.map {
                SelectOption(
                    value: $0.rawValue, label: localizer.text("intervention.kind.\($0.rawValue)", language),
                    selected: $0.rawValue == form.interventionKind)
            },
            messages: library.messages.map {
                TextRow(id: $0.id?.uuidString ?? "", label: "", texts: $0.texts, language: language)
            },
            messageErrors: state.messageErrors,
            plan: state.plan
                ?? library.plan.map {
                    ConsoleRulesController.PlanForm(
                        perDay: String($0.perDay), windowStart: $0.windowStart.description,
                        windowEnd: $0.windowEnd.description,
                        personChooses: $0.personChooses ? "on" : nil)
                } ?? ConsoleRulesController.PlanForm(perDay: "2", windowStart: "09:00", windowEnd: "20:00"),
            hasPlan: library.plan != nil, planErrors: state.planErrors)
    }

    /// A questionnaire's questions (those answered with a number or a choice), scores and bands, in the reader's
    /// language.
    private func ruleTargets(_ definition: InstrumentDefinition) -> RuleTargets {
        let questions = definition.items.filter { [.single, .boolean, .scale, .slider, .number].contains($0.type) }
        var bands: [SelectOption] = []
        for band in definition.scores.flatMap(\.bands) {
            guard let level = band.level, !bands.contains(where: { $0.value == level }) else { continue }
            bands.append(SelectOption(value: level, label: band.label.text(language), selected: false))
        }
        return RuleTargets(
            instrumentKey: definition.key,
            questions: questions.map {
                SelectOption(value: $0.id, label: $0.text.text(language).shortened(to: 80), selected: false)
            },
            scores: definition.scores.map {
                SelectOption(value: $0.id, label: $0.title.text(language), selected: false)
            },
            bands: bands)
    }

    func clauseRows(_ form: RuleForm, targets: [RuleTargets]) -> [ClauseRow] {
        let chosen =
            targets.first { $0.instrumentKey == form.instrumentKey } ?? targets.first
            ?? RuleTargets(instrumentKey: "", questions: [], scores: [], bands: [])
        let rows = [
            (form.subject0, form.id0, form.operator0, form.value0),
            (form.subject1, form.id1, form.operator1, form.value1),
            (form.subject2, form.id2, form.operator2, form.value2),
        ]
        let operators: [RuleClause.Operator] = [.greaterOrEqual, .greater, .equals, .notEquals, .lessOrEqual, .less]
        return rows.enumerated().map { index, row in
            ClauseRow(
                index: index,
                subjects: [SelectOption(value: "", label: "–", selected: row.0.isEmpty)]
                    + RuleClause.Subject.allCases.map {
                        SelectOption(
                            value: $0.rawValue, label: localizer.text("console.rules.subject.\($0.rawValue)", language),
                            selected: $0.rawValue == row.0)
                    },
                id: row.1,
                targets: RuleTargets(
                    instrumentKey: chosen.instrumentKey,
                    questions: chosen.questions.map {
                        SelectOption(value: $0.value, label: $0.label, selected: $0.value == row.1)
                    },
                    scores: chosen.scores.map {
                        SelectOption(value: $0.value, label: $0.label, selected: $0.value == row.1)
                    },
                    bands: chosen.bands),
                operators: operators.map {
                    SelectOption(value: $0.rawValue, label: $0.symbol, selected: $0.rawValue == row.2)
                },
                value: row.3)
        }
    }

    /// A rule in a sentence: "When PHQ-9 is submitted (score total ≥ 15) → alert (high)".
    func summary(of rule: StudyRule, titles: [String: String], targets: [RuleTargets]) -> String {
        let when: String
        switch rule.trigger {
        case .submitted(let key, let condition):
            // Questions by their text, scores and bands by their names; an id only where the questionnaire has none.
            let lists = targets.first { $0.instrumentKey == key }
            let named = { (options: [SelectOption]?, value: String) in
                options?.first { $0.value == value }?.label ?? value
            }
            let clauses = condition.clauses.map { clause -> String in
                let what =
                    clause.subject == .band
                    ? named(lists?.bands, clause.level ?? "") : clause.value.map { $0.plainText() } ?? ""
                let which = named(clause.subject == .item ? lists?.questions : lists?.scores, clause.id)
                return
                    "\(localizer.text("console.rules.subject.\(clause.subject.rawValue)", language)) “\(which)” \(clause.operator.symbol) \(what)"
            }
            let joiner = " \(localizer.text("console.rules.mode.\(condition.mode.rawValue)", language)) "
            when =
                localizer.text("console.rules.whenSubmitted", language, ["instrument": titles[key] ?? key])
                + (clauses.isEmpty ? "" : " (\(clauses.joined(separator: joiner)))")
        case .missedInARow(let count, let key):
            when = localizer.text(
                "console.rules.whenMissed", count: count, language,
                ["instrument": key.map { titles[$0] ?? $0 } ?? localizer.text("console.rules.anyInstrument", language)])
        }
        let then: String
        switch rule.action {
        case .intervention(let draft):
            then = "\(localizer.text("intervention.kind.\(draft.kind.rawValue)", language)): “\(draft.text)”"
        case .alert(let priority, let message):
            then =
                "\(localizer.text("console.rules.action.alert", language)) (\(localizer.text("alert.priority.\(priority.rawValue)", language))): “\(message)”"
        case .prompt(let key, let hours):
            then = localizer.text(
                "console.rules.action.promptSummary", language,
                ["instrument": titles[key] ?? key, "hours": String(hours)])
        }
        return "\(when) → \(then)"
    }
}
