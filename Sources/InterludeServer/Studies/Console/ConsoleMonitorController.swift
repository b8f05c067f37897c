import Foundation
import InterludeCore
import Vapor

/// The study monitor in the console: every participant's prompts, deliveries and flags over the last days, and one
/// participant's timeline.
struct ConsoleMonitorController {
    func register(on routes: any RoutesBuilder) {
        routes.get("studies", ":studyID", "monitor", use: show)
        routes.get("studies", ":studyID", "monitor", ":patientID", use: participant)
    }

    private func grant(_ request: Request) async throws -> StudyGrant {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        guard let studyID = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return try await StudyAccess(database: request.db, services: request.services).require(
            .readParticipantData, in: studyID, by: user)
    }

    private func pages(_ request: Request, _ grant: StudyGrant) -> MonitorPages {
        MonitorPages(viewer: grant.viewer, database: request.db, services: request.services)
    }

    func show(_ request: Request) async throws -> Response {
        let grant = try await grant(request)
        let query = try MonitorPages.Query(
            days: request.query[String.self, at: "days"], flag: request.query[String.self, at: "flag"],
            sort: request.query[String.self, at: "sort"])
        return try await request.renderConsole(
            "console/monitor", titleKey: "console.monitor.title",
            content: try await pages(request, grant).monitor(
                grant, query))
    }

    func participant(_ request: Request) async throws -> Response {
        let grant = try await grant(request)
        guard let patientID = request.parameters.get("patientID", as: UUID.self) else { throw AppError.notFound }
        let query = try MonitorPages.Query(days: request.query[String.self, at: "days"], flag: nil, sort: nil)
        guard let content = try await pages(request, grant).timeline(of: patientID, in: grant, days: query.days) else {
            throw AppError.notFound
        }
        return try await request.renderConsole(
            "console/monitor-participant", titleKey: "console.monitor.timeline", content: content)
    }
}
