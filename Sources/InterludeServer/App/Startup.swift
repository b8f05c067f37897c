import Fluent
import Foundation
import InterludeCore
import Vapor

/// What `serve` does before it listens: bring the schema up to date, check that this machine has the installation's
/// keys and, on an empty installation, create the first admin and say how to sign in; with `demo`, set up the demonstration once and show its accounts.
public func prepareToServe(_ app: Application, demo: Bool = false) async throws {
    let applied = try await migrate(app)
    app.logger.notice("database ready, \(applied) migrations applied")
    try await InstallationKeys(
        database: app.db, services: app.interlude, vapidPublicKey: app.notificationChannels.vapidPublicKey
    )
    .verify()
    let settings = app.interlude.settings
    let staff = StaffAccounts(database: app.db, services: app.interlude)
    var rows: [(String, String)] = [
        ("Console", "\(settings.publicURL)/console"), ("Patient app", "\(settings.publicURL)/app"),
        ("Database", StartupScreen.describe(settings.database)), ("Mail", StartupScreen.describe(settings.mail)),
    ]
    var notes: [String] = []
    if let created = try await staff.bootstrapAdminIfNeeded() {
        let credentials = [
            "  Email:              \(created.user.email)",
            "  One-time password:  \(created.oneTimePassword ?? "")",
        ]
        // Written to a file only the server's user can read; shown on screen only to a person at a terminal, as
        // standard output that is not a terminal ends up in logs.
        let file = settings.dataDirectory + "/first-admin.txt"
        guard
            FileManager.default.createFile(
                atPath: file, contents: Data((credentials.joined(separator: "\n") + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteNoPermission) }
        if isatty(STDOUT_FILENO) == 1 {
            rows += [("Admin", created.user.email), ("One-time password", created.oneTimePassword ?? "")]
        } else {
            rows.append(("Admin", "created; its sign-in is in \(file)"))
        }
        notes = [
            "First start: sign in to the console as the admin; you will choose a new password.",
            "Delete \(file) afterwards.",
        ]
    }
    if demo {
        switch try await DemoInstallation(database: app.db, services: app.interlude, logger: app.logger).ensure() {
        case .some(let accounts) where isatty(STDOUT_FILENO) == 1:
            let width = accounts.map(\.email.count).max() ?? 0
            rows += accounts.map {
                (
                    "Demo \($0.role.rawValue)",
                    $0.email.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.password
                )
            }
            notes.append(
                "Demo accounts are for trying Interlude: never enter real people's data into this installation.")
        case .some:
            // Standard output that is not a terminal ends up in logs: the passwords stay in their file.
            rows.append(
                ("Demo", "accounts and passwords in \(settings.dataDirectory)/\(DemoInstallation.accountsFile)"))
            notes.append(
                "Demo accounts are for trying Interlude: never enter real people's data into this installation.")
        case nil:
            rows.append(("Demo", "set up earlier; \(DemoInstallation.accountsFile) with its passwords is gone"))
        }
    }
    let screen = StartupScreen(title: "Interlude \(InterludeVersion.current) is ready", rows: rows, notes: notes)
    print("\n" + screen.text + "\n")
    BackgroundJobs.start(in: app)
}

/// Brings the schema up to date and installs library instruments that are not in the database yet; answers how many
/// migrations it applied. Each one is logged at debug level only.
@discardableResult
package func migrate(_ app: Application) async throws -> Int {
    app.fluent.migrationLogLevel = .debug
    try await app.migrator.setupIfNeeded().get()
    let pending = try await app.migrator.previewPrepareBatch().get().count
    try await app.autoMigrate()
    try await InstrumentCatalog(database: app.db, services: app.interlude)
        .installLibrary(app.interlude.library, logger: app.logger)
    return pending
}

/// `interlude migrate`: applies every pending migration without asking.
struct MigrateCommand: AsyncCommand {
    struct Signature: CommandSignature {}

    var help: String { "Applies pending database migrations." }

    func run(using context: CommandContext, signature: Signature) async throws {
        try await migrate(context.application)
        context.console.print("Database schema is up to date.")
    }
}

/// `interlude user create --email … --role … [--name …] [--password …]`: creates a staff account.
struct UserCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "action", help: "create")
        var action: String

        @Option(name: "email", help: "The account's email address.")
        var email: String?

        @Option(name: "role", help: "therapist, researcher or admin.")
        var role: String?

        @Option(name: "name", help: "Full name; for a therapist with academic degree.")
        var name: String?

        @Option(name: "password", help: "The password; without it a one-time password is generated.")
        var password: String?
    }

    var help: String { "Creates a staff account: user create --email … --role therapist|researcher|admin" }

    func run(using context: CommandContext, signature: Signature) async throws {
        guard signature.action == "create" else {
            throw SettingsError.invalid(name: "action", value: signature.action, expected: "create")
        }
        let app = context.application
        try await migrate(app)
        do {
            let created = try await StaffAccounts(database: app.db, services: app.interlude).create(
                email: signature.email ?? "", role: signature.role ?? "", name: signature.name,
                password: signature.password, forceChange: false, by: nil)
            context.console.print("Created \(created.user.role.rawValue) \(created.user.email).")
            if let oneTime = created.oneTimePassword {
                context.console.print("One-time password: \(oneTime) (must be changed at the first sign-in)")
            }
        } catch let failure as AppError {
            throw CommandFailure(message: describe(failure, localizer: app.interlude.localizer))
        } catch let failure as ValidationFailure {
            throw CommandFailure(message: describe(failure.appError, localizer: app.interlude.localizer))
        }
    }
}

package struct CommandFailure: Error, CustomStringConvertible {
    let message: String

    package init(message: String) {
        self.message = message
    }

    package var description: String { message }
}

/// Registers Interlude's own commands next to Vapor's.
public func registerCommands(_ app: Application) {
    app.asyncCommands.use(MigrateCommand(), as: "migrate")
    app.asyncCommands.use(UserCommand(), as: "user")
    app.asyncCommands.use(InstrumentsCommand(), as: "instruments")
    app.asyncCommands.use(WorkerCommand(), as: "worker")
    app.asyncCommands.use(DemoCommand(), as: "demo")
    app.asyncCommands.use(ExportCommand(), as: "export")
    app.asyncCommands.use(BackupCommand(), as: "backup")
    app.asyncCommands.use(ErasuresCommand(), as: "erasures")
    app.asyncCommands.use(DoctorCommand(), as: "doctor")
}
