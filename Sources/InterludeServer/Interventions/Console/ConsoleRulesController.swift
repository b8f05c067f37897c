import Fluent
import Foundation
import InterludeCore
import Vapor

/// A study's rules (with a dry run against a participant's past), its log of firings, its intervention
/// templates, and its pool of reinforcement messages with the plan that sends them.
struct ConsoleRulesController {
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

    struct TextRow: Encodable, Sendable {
        var id: String
        var label: String
        var text: String
    }

    /// One clause row of the form, as sent or empty.
    struct ClauseRow: Encodable, Sendable {
        var index: Int
        var subjects: [SelectOption]
        var id: String
        var operators: [SelectOption]
        var value: String
    }

    struct PlanForm: Content {
        var perDay: String
        var windowStart: String
        var windowEnd: String
    }

    struct TextForm: Content {
        var kind: String?
        var text: String?
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
        var plan: PlanForm
        var hasPlan: Bool
        var planErrors: FormErrors
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("rules", use: practiceRules)
        routes.get("studies", ":studyID", "rules", use: show)
        routes.post("studies", ":studyID", "rules", use: submit)
        routes.post("studies", ":studyID", "rules", ":ruleID", "delete", use: deleteRule)
        routes.post("studies", ":studyID", "templates", use: addTemplate)
        routes.post("studies", ":studyID", "templates", ":itemID", "delete", use: deleteTemplate)
        routes.post("studies", ":studyID", "messages", use: addMessage)
        routes.post("studies", ":studyID", "messages", ":itemID", "delete", use: deleteMessage)
        routes.post("studies", ":studyID", "message-plan", use: setPlan)
    }

    /// A therapist's rules live in their practice.
    func practiceRules(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let practice = try await PairingService(database: request.db, services: request.services)
            .practice(of: therapist.requireID())
        return request.redirect(to: .rules(study: try practice.requireID()))
    }

    func show(_ request: Request) async throws -> Response {
        try await render(request, added: (try? request.query.get(String.self, at: "added")) != nil)
    }

    struct Overrides {
        var form: RuleForm?
        var errors = FormErrors()
        var dryRun: [DryRunRow]?
        var templateErrors = FormErrors()
        var messageErrors = FormErrors()
        var plan: PlanForm?
        var planErrors = FormErrors()
        var status: HTTPResponseStatus = .ok
    }

    private func render(_ request: Request, added: Bool = false, overrides: Overrides = Overrides()) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let studyID = try Self.studyID(request)
        let services = request.services
        let language = staff.language
        let localizer = services.localizer
        let display = staff.dateDisplay
        let grant = try await Self.grant(.viewRules, request, staff)
        let study = grant.study
        let rules = RuleService(database: request.db, services: services)
        let stored = try await rules.rules(in: grant)
        let catalog = InstrumentCatalog(database: request.db, now: services.clock.now)
        var titles: [String: String] = [:]
        for record in try await catalog.overview() where record.isUsable(in: grant.studyID) {
            titles[record.key] = record.title(in: language)
        }
        let candidates = try await rules.dryRunCandidates(in: grant)
        let firings = grant.allows(.viewFirings) ? try await rules.firings(in: grant) : []
        let library = try await InterventionLibrary(database: request.db, services: services).contents(of: studyID)
        let withheld = localizer.text("alert.withheld", language)
        let form = overrides.form ?? RuleForm()
        let content = RulesContent(
            studyID: studyID.uuidString, studyTitle: study.title,
            canEdit: grant.allows(.editRules),
            rules: stored.map {
                RuleRow(id: $0.id?.uuidString ?? "", name: $0.rule.name, summary: Self.summary(of: $0.rule, titles: titles, localizer: localizer, language: language))
            },
            hasRules: !stored.isEmpty, form: form,
            clauses: Self.clauseRows(form, localizer: localizer, language: language), errors: overrides.errors, added: added,
            instruments: titles.keys.sorted().map { SelectOption(value: $0, label: titles[$0] ?? $0, selected: $0 == form.instrumentKey) },
            participants: candidates.map { SelectOption(value: $0.patientID.uuidString, label: $0.pseudonym, selected: false) },
            dryRun: overrides.dryRun ?? [], triedDryRun: overrides.dryRun != nil,
            firings: firings.map {
                FiringRow(
                    at: display.dateTime($0.record.createdAt), rule: $0.record.ruleName, participant: $0.pseudonym ?? "–",
                    reason: $0.reason ?? withheld,
                    outcome: localizer.text("console.rules.outcome.\(FiringOutcome(stored: $0.record.outcome).rawValue)", language))
            },
            hasFirings: !firings.isEmpty,
            templates: library.templates.map {
                TextRow(id: $0.id?.uuidString ?? "", label: localizer.text("intervention.kind.\($0.kind.rawValue)", language), text: $0.text)
            },
            templateErrors: overrides.templateErrors,
            kinds: InterventionKind.written.map {
                SelectOption(value: $0.rawValue, label: localizer.text("intervention.kind.\($0.rawValue)", language), selected: $0.rawValue == form.interventionKind)
            },
            messages: library.messages.map { TextRow(id: $0.id?.uuidString ?? "", label: "", text: $0.text) },
            messageErrors: overrides.messageErrors,
            plan: overrides.plan
                ?? library.plan.map {
                    PlanForm(perDay: String($0.perDay), windowStart: $0.windowStart.description, windowEnd: $0.windowEnd.description)
                } ?? PlanForm(perDay: "2", windowStart: "09:00", windowEnd: "20:00"),
            hasPlan: library.plan != nil, planErrors: overrides.planErrors)
        return try await request.renderConsole(
            "console/rules", titleKey: "console.rules.title", content: content, status: overrides.status)
    }

    static func clauseRows(_ form: RuleForm, localizer: Localizer, language: Language) -> [ClauseRow] {
        let rows = [
            (form.subject0, form.id0, form.operator0, form.value0), (form.subject1, form.id1, form.operator1, form.value1),
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
                operators: operators.map { SelectOption(value: $0.rawValue, label: $0.symbol, selected: $0.rawValue == row.2) },
                value: row.3)
        }
    }

    /// A rule in a sentence: "When PHQ-9 is submitted (score total ≥ 15) → alert (high)".
    static func summary(of rule: StudyRule, titles: [String: String], localizer: Localizer, language: Language) -> String {
        let when: String
        switch rule.trigger {
        case .submitted(let key, let condition):
            let clauses = condition.clauses.map { clause -> String in
                let what = clause.subject == .band ? clause.level ?? "" : clause.value.map { $0.plainText() } ?? ""
                return "\(localizer.text("console.rules.subject.\(clause.subject.rawValue)", language)) \(clause.id) \(clause.operator.symbol) \(what)"
            }
            let joiner = " \(localizer.text("console.rules.mode.\(condition.mode.rawValue)", language)) "
            when = localizer.text("console.rules.whenSubmitted", language, ["instrument": titles[key] ?? key])
                + (clauses.isEmpty ? "" : " (\(clauses.joined(separator: joiner)))")
        case .missedInARow(let count, let key):
            when = localizer.text(
                "console.rules.whenMissed", language,
                ["count": String(count), "instrument": key.map { titles[$0] ?? $0 } ?? localizer.text("console.rules.anyInstrument", language)])
        }
        let then: String
        switch rule.action {
        case .intervention(let draft):
            then = "\(localizer.text("intervention.kind.\(draft.kind.rawValue)", language)): “\(draft.text)”"
        case .alert(let priority, let message):
            then = "\(localizer.text("console.rules.action.alert", language)) (\(localizer.text("alert.priority.\(priority.rawValue)", language))): “\(message)”"
        case .prompt(let key, let hours):
            then = localizer.text("console.rules.action.promptSummary", language, ["instrument": titles[key] ?? key, "hours": String(hours)])
        }
        return "\(when) → \(then)"
    }

    static func studyID(_ request: Request) throws -> UUID {
        guard let id = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return id
    }

    /// The study in the path, if the staff member holds `permission` in it.
    static func grant(_ permission: StudyPermission, _ request: Request, _ staff: UserRecord) async throws -> StudyGrant {
        try await StudyAccess(database: request.db, now: request.services.clock.now)
            .require(permission, in: try studyID(request), by: staff)
    }

    func submit(_ request: Request) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let form = try request.content.decode(RuleForm.self)
        let intent = try? request.content.get(String.self, at: "intent")
        let grant = try await Self.grant(intent == "dry-run" ? .dryRunRules : .editRules, request, staff)
        let rules = RuleService(database: request.db, services: request.services)
        do {
            let rule = try form.rule()
            if intent == "dry-run" {
                let patient = (try? request.content.get(String.self, at: "patientID")).flatMap(UUID.init(uuidString:))
                guard let patient else { throw AppError.field("patientID", .required) }
                let lines = try await rules.dryRun(rule, in: grant, patientID: patient)
                let display = staff.dateDisplay
                return try await render(
                    request,
                    overrides: Overrides(
                        form: form,
                        dryRun: lines.map { DryRunRow(at: display.dateTime($0.at), fires: $0.reason != nil, reason: $0.reason ?? "") }))
            }
            _ = try await rules.add(rule, in: grant)
            return request.redirect(to: .rules(study: grant.studyID), query: [("added", "1")])
        } catch {
            guard var errors = FormErrors.from(Self.formError(error), request: request) else { throw error }
            if errors.fields["patientId"] != nil { errors.fields["patientID"] = errors.fields["patientId"] }
            return try await render(request, overrides: Overrides(form: form, errors: errors, status: errors.status))
        }
    }

    /// Renames the fields of a rule's validation problems to the form's.
    private static func formError(_ error: any Error) -> any Error {
        let errors: [FieldError]
        if let failure = error as? ValidationFailure {
            errors = failure.errors
        } else if case .validation(let list) = error as? AppError {
            errors = list
        } else {
            return error
        }
        return ValidationFailure(errors.map { FieldError(field: RuleForm.formField(for: $0.field), code: $0.code, limit: $0.limit) })
    }

    func deleteRule(_ request: Request) async throws -> Response {
        let grant = try await Self.grant(.editRules, request, try request.consoleUser(.therapist, .researcher, .admin))
        guard let ruleID = request.parameters.get("ruleID", as: UUID.self) else { throw AppError.notFound }
        try await RuleService(database: request.db, services: request.services).remove(ruleID, in: grant)
        return request.redirect(to: .rules(study: grant.studyID))
    }

    func addTemplate(_ request: Request) async throws -> Response {
        let form = try request.content.decode(TextForm.self)
        return try await changeLibrary(request, section: "templates", errorsAt: \.templateErrors) { library, grant in
            try await library.addTemplate(try InterventionDraft.validate(kindNamed: form.kind, text: form.text), in: grant)
        }
    }

    func deleteTemplate(_ request: Request) async throws -> Response {
        let id = try Self.itemID(request)
        return try await changeLibrary(request, section: "templates") { try await $0.removeTemplate(id, in: $1) }
    }

    func addMessage(_ request: Request) async throws -> Response {
        let form = try request.content.decode(TextForm.self)
        return try await changeLibrary(request, section: "messages", errorsAt: \.messageErrors) {
            try await $0.addMessage(form.text, in: $1)
        }
    }

    func deleteMessage(_ request: Request) async throws -> Response {
        let id = try Self.itemID(request)
        return try await changeLibrary(request, section: "messages") { try await $0.removeMessage(id, in: $1) }
    }

    func setPlan(_ request: Request) async throws -> Response {
        let form = try request.content.decode(PlanForm.self)
        let remove = (try? request.content.get(String.self, at: "intent")) == "remove"
        return try await changeLibrary(request, section: "messages", errorsAt: \.planErrors, keeping: { $0.plan = form }) {
            library, grant in
            let plan = remove
                ? nil : try MessagePlan.parse(perDay: form.perDay, windowStart: form.windowStart, windowEnd: form.windowEnd)
            try await library.setPlan(plan, in: grant)
        }
    }

    private static func itemID(_ request: Request) throws -> UUID {
        guard let id = request.parameters.get("itemID", as: UUID.self) else { throw AppError.notFound }
        return id
    }

    /// Makes one change to the study's templates, messages or message plan and returns to that section; a refused
    /// change shows the page again with its problems next to the form it came from.
    private func changeLibrary(
        _ request: Request, section: String, errorsAt errors: WritableKeyPath<Overrides, FormErrors>? = nil,
        keeping: (inout Overrides) -> Void = { _ in },
        _ change: (InterventionLibrary, StudyGrant) async throws -> Void
    ) async throws -> Response {
        let grant = try await Self.grant(.editLibrary, request, try request.consoleUser(.therapist, .researcher, .admin))
        do {
            try await change(InterventionLibrary(database: request.db, services: request.services), grant)
            return request.redirect(to: .rules(study: grant.studyID), fragment: section)
        } catch {
            guard let errors, let problems = FormErrors.from(error, request: request) else { throw error }
            var overrides = Overrides(status: problems.status)
            overrides[keyPath: errors] = problems
            keeping(&overrides)
            return try await render(request, overrides: overrides)
        }
    }
}
