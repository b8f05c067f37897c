import Vapor

/// `interlude demo --template intersession|…|iact|intersession-trial`: creates a working demonstration and
/// prints one line per demo account, `<role>: <email> <password>`.
struct DemoCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(
            name: "template",
            help: "intersession, track-your-stress, tinnitus-navigator, anima, iact or intersession-trial.")
        var template: String?
    }

    var help: String {
        "Creates a demo study with a demo therapist and a paired demo patient: demo --template "
            + DemoSetup.Template.allCases.map(\.rawValue).joined(separator: "|")
    }

    func run(using context: CommandContext, signature: Signature) async throws {
        let names = DemoSetup.Template.allCases.map(\.rawValue).joined(separator: ", ")
        guard let template = DemoSetup.Template(rawValue: signature.template ?? "") else {
            throw CommandFailure(message: "Choose a template with --template: \(names).")
        }
        let app = context.application
        try await migrate(app)
        let accounts = try await DemoSetup(database: app.db, services: app.interlude, logger: app.logger)
            .create(template)
        for account in accounts { context.console.print(account.line) }
    }
}
