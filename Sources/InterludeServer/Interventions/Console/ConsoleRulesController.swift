import Fluent
import Foundation
import InterludeCore
import Vapor

/// A study's rules (with a dry run against a participant's past), its log of firings, its intervention
/// templates, and its pool of reinforcement messages with the plan that sends them.
struct ConsoleRulesController {
    struct PlanForm: Content {
        var perDay: String
        var windowStart: String
        var windowEnd: String
        /// "on" when participants may choose fewer messages and a narrower window.
        var personChooses: String?
    }

    /// A template or message in English (`text`), German (`textDe`) or both.
    struct TextForm: Content {
        var kind: String?
        var text: String?
        var textDe: String?

        var texts: [Language: String?] { [.en: text, .de: textDe] }
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

    private func render(
        _ request: Request, added: Bool = false, state: RulesPages.State = .init(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await Self.grant(.viewRules, request, staff)
        let content = try await RulesPages(viewer: staff, database: request.db, services: request.services)
            .rules(grant, added: added, state: state)
        return try await request.renderConsole(
            "console/rules", titleKey: "console.rules.title", content: content, script: "/js/console/rule-form.js",
            status: status)
    }

    static func studyID(_ request: Request) throws -> UUID {
        guard let id = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return id
    }

    /// The study in the path, if the staff member holds `permission` in it.
    static func grant(_ permission: StudyPermission, _ request: Request, _ staff: UserRecord) async throws -> StudyGrant
    {
        try await StudyAccess(database: request.db, services: request.services)
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
                    state: .init(
                        form: form,
                        dryRun: lines.map {
                            RulesPages.DryRunRow(
                                at: display.dateTime($0.at), fires: $0.reason != nil, reason: $0.reason ?? "")
                        }))
            }
            _ = try await rules.add(rule, in: grant)
            return request.redirect(to: .rules(study: grant.studyID), query: [("added", "1")])
        } catch {
            guard var errors = FormErrors.from(Self.formError(error), request: request) else { throw error }
            if errors.fields["patientId"] != nil { errors.fields["patientID"] = errors.fields["patientId"] }
            return try await render(request, state: .init(form: form, errors: errors), status: errors.status)
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
        return ValidationFailure(
            errors.map { FieldError(field: RuleForm.formField(for: $0.field), code: $0.code, limit: $0.limit) })
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
            try await library.addTemplate(
                try InterventionTemplateDraft.validate(kindNamed: form.kind, texts: form.texts), in: grant)
        }
    }

    func deleteTemplate(_ request: Request) async throws -> Response {
        let id = try Self.itemID(request)
        return try await changeLibrary(request, section: "templates") { try await $0.removeTemplate(id, in: $1) }
    }

    func addMessage(_ request: Request) async throws -> Response {
        let form = try request.content.decode(TextForm.self)
        return try await changeLibrary(request, section: "messages", errorsAt: \.messageErrors) {
            try await $0.addMessage(form.texts, in: $1)
        }
    }

    func deleteMessage(_ request: Request) async throws -> Response {
        let id = try Self.itemID(request)
        return try await changeLibrary(request, section: "messages") { try await $0.removeMessage(id, in: $1) }
    }

    func setPlan(_ request: Request) async throws -> Response {
        let form = try request.content.decode(PlanForm.self)
        let remove = (try? request.content.get(String.self, at: "intent")) == "remove"
        return try await changeLibrary(
            request, section: "messages", errorsAt: \.planErrors, keeping: { $0.plan = form }
        ) {
            library, grant in
            let plan =
                remove
                ? nil
                : try MessagePlan.parse(
                    perDay: form.perDay, windowStart: form.windowStart, windowEnd: form.windowEnd,
                    personChooses: form.personChooses == "on")
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
        _ request: Request, section: String, errorsAt errors: WritableKeyPath<RulesPages.State, FormErrors>? = nil,
        keeping: (inout RulesPages.State) -> Void = { _ in },
        _ change: (InterventionLibrary, StudyGrant) async throws -> Void
    ) async throws -> Response {
        let grant = try await Self.grant(
            .editLibrary, request, try request.consoleUser(.therapist, .researcher, .admin))
        do {
            try await change(InterventionLibrary(database: request.db, services: request.services), grant)
            return request.redirect(to: .rules(study: grant.studyID), fragment: section)
        } catch {
            guard let errors, let problems = FormErrors.from(error, request: request) else { throw error }
            var state = RulesPages.State()
            state[keyPath: errors] = problems.withLanguageFields
            keeping(&state)
            return try await render(request, state: state, status: problems.status)
        }
    }
}
