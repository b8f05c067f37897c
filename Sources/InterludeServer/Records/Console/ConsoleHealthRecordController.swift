import Foundation
import InterludeCore
import Vapor

/// A patient's health record on the therapist's console, on a page of its own that prints.
struct ConsoleHealthRecordController {
    func register(on routes: any RoutesBuilder) {
        routes.get("patients", ":patientID", "record", use: show)
    }

    func show(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        let content = try await HealthRecordPages(viewer: therapist, database: request.db, services: request.services)
            .record(chart)
        return try await request.renderConsole(
            "console/health-record", titleKey: "console.healthRecord.title", content: content)
    }
}
