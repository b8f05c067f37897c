import Foundation
import InterludeCore
import Vapor

/// A study's or a practice's arms on a page of their own: a therapist's comparison in their practice, its patients
/// allocated as they pair.
struct ConsoleArmsController: Sendable {
    struct Page: Encodable, Sendable {
        let action: String
        /// The arm rows and the method, as the shared fields show them.
        let form: ArmFields
        let armRows: [ArmFields.Row]
        let armsError: String?
        let saved: Bool
        let errors: FormErrors
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("arms", use: practiceArms)
        routes.get("studies", ":studyID", "arms", use: show)
        routes.post("studies", ":studyID", "arms", use: submit)
    }

    /// A therapist's arms are their practice's.
    func practiceArms(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let practice = try await PairingService(database: request.db, services: request.services).practice(
            of: therapist.requireID())
        return request.redirect(to: .arms(study: try practice.requireID()))
    }

    func show(_ request: Request) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await ConsoleRulesController.grant(.designArms, request, staff)
        let study = grant.study
        let fields = ArmFields(allocation: study.allocation?.rawValue)
            .withArms(StudyArms.names(of: study), design: StudyArms.design(of: study))
        return try await render(request, grant, fields, saved: request.query[String.self, at: "saved"] != nil)
    }

    func submit(_ request: Request) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await ConsoleRulesController.grant(.designArms, request, staff)
        let fields = try request.content.decode(ArmFields.self)
        // The method's settings the page has no fields for (blocks, factors, cycles) stay as they were.
        let kept = StudyArms.design(of: grant.study).map(AllocationSettings.init) ?? AllocationSettings()
        let (names, settings) = fields.arms(settings: kept)
        do {
            _ = try await StudyService(database: request.db, services: request.services).setArms(
                names, allocation: fields.allocation, settings: settings, in: grant)
            return request.redirect(to: .arms(study: grant.studyID), query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(request, grant, fields, errors: errors, status: errors.status)
        }
    }

    private func render(
        _ request: Request, _ grant: StudyGrant, _ fields: ArmFields, saved: Bool = false,
        errors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        try await request.renderConsole(
            "console/arms", titleKey: "console.arms.title",
            content: Page(
                action: ConsoleURL.arms(study: grant.studyID).path, form: fields, armRows: fields.rows,
                armsError: ArmFields.error(in: errors), saved: saved, errors: errors),
            status: status)
    }
}
