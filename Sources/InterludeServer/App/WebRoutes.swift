import Vapor

/// The console and the patient app.
struct WebRoutes {
    func register(on app: Application) throws {
        let web = app.grouped(TextDoorMiddleware(limit: app.routes.defaultMaxBodySize.value))
        web.get { request in try await FrontDoor.render(request) }
        web.get("calendar", ":feed") { request async throws -> Response in
            // The feed name is the secret followed by .ics.
            let name = request.parameters.get("feed") ?? ""
            guard name.hasSuffix(".ics"),
                let calendar = try await AppointmentService(database: request.db, services: request.services)
                    .calendar(secret: String(name.dropLast(4)))
            else { throw Abort(.notFound) }
            var headers = HTTPHeaders()
            headers.contentType = HTTPMediaType(type: "text", subType: "calendar", parameters: ["charset": "utf-8"])
            headers.replaceOrAdd(name: .cacheControl, value: "private, max-age=300")
            return Response(status: .ok, headers: headers, body: .init(string: calendar))
        }
        PatientAppController().register(on: web)

        let console = web.grouped("console")
        let signedIn = console.grouped(ConsoleAuthMiddleware())
        ConsoleAccountController().register(public: web, signedIn: signedIn)
        ConsoleAdminController().register(on: signedIn)
        ConsoleTherapistController().register(on: signedIn)
        ConsoleStudiesController().register(on: signedIn)
        ConsoleTeamController().register(on: signedIn)
        ConsoleMonitorController().register(on: signedIn)
        ConsoleConsentController().register(on: signedIn)
        ConsoleExportController().register(on: signedIn)
        ConsoleInstrumentsController().register(on: signedIn)
        ConsoleScheduleController().register(on: signedIn)
        ConsoleInterventionsController().register(on: signedIn)
        ConsoleRulesController().register(on: signedIn)
        ConsoleRecordSettingsController().register(on: signedIn)
        ConsoleArmsController().register(on: signedIn)
        ConsoleHealthRecordController().register(on: signedIn)
        ConsoleThoughtsController().register(on: signedIn)
        ConsoleReportController().register(on: signedIn)
        ConsoleInstrumentEditorController().register(on: signedIn)
    }
}
