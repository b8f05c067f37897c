import Vapor

/// The console and the patient app.
struct WebRoutes {
    func register(on app: Application) throws {
        app.get { request in request.redirect(to: "/app") }
        PatientAppController().register(on: app)

        let console = app.grouped("console")
        let signedIn = console.grouped(ConsoleAuthMiddleware())
        ConsoleAccountController().register(public: app, signedIn: signedIn)
        ConsoleAdminController().register(on: signedIn)
        ConsoleTherapistController().register(on: signedIn)
        ConsoleStudiesController().register(on: signedIn)
        ConsoleInstrumentsController().register(on: signedIn)
    }
}
