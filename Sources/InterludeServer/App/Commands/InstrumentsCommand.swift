import Fluent
import Foundation
import InterludeCore
import Vapor

/// `interlude instruments import FILE [--publish] [--key KEY] [--forms A,B]`: imports Interlude JSON, a FHIR
/// Questionnaire or a REDCap data dictionary (one instrument per form) as new draft versions of instruments of the
/// whole installation (shared with every study), published at once with `--publish`. Problems are printed one per
/// line, each with its place in the file.
struct InstrumentsCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "action", help: "import")
        var action: String

        @Argument(name: "file", help: "The file to import (.json or .csv).")
        var file: String

        @Flag(name: "publish", help: "Publish the imported version at once.")
        var publish: Bool

        @Option(name: "key", help: "A key of your own in place of the file's (for several forms, their prefix).")
        var key: String?

        @Option(name: "forms", help: "The REDCap forms to import, separated by commas; all when left out.")
        var forms: String?
    }

    var help: String { "Imports a questionnaire: instruments import FILE [--publish] [--key KEY] [--forms A,B]" }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        let governance = InstrumentGovernance(database: app.db, services: app.interlude)
        switch signature.action {
        case "import":
            guard let data = FileManager.default.contents(atPath: signature.file) else {
                throw CommandFailure(message: "No file at \(signature.file).")
            }
            let localizer = app.interlude.localizer
            do {
                let choice = try InstrumentCatalog.Choice(forms: signature.forms, key: signature.key)
                let upload = try InstrumentCatalog.parse(data, format: nil, choice: choice)
                guard
                    let importer = try await UserRecord.query(on: app.db)
                        .filter(\.$role == Role.admin)
                        .filter(\.$deactivatedAt == nil)
                        .sort(\.$createdAt).first()
                else { throw CommandFailure(message: "Create an administrator first; imports are recorded under one.") }
                // The operator imports for the whole installation, as its first administrator.
                let records = try await governance.importUpload(
                    upload, for: nil, publish: signature.publish, by: importer)
                for record in records {
                    context.console.print(
                        "Imported \(record.key) version \(record.version) as \(record.status.rawValue) (\(upload.format.rawValue))."
                    )
                }
                for note in upload.notes {
                    context.console.print("\(note.place): \(localizer.message(for: note, .en))")
                }
            } catch let failure as ValidationFailure {
                throw refusal(failure.appError, console: context.console, localizer: localizer)
            } catch let failure as AppError {
                throw refusal(failure, console: context.console, localizer: localizer)
            }
        default:
            throw CommandFailure(message: "Use 'instruments import FILE [--publish]'.")
        }
    }
}

/// Prints every problem of a refused file on a line of its own and gives the one-line failure the command ends
/// with (the log keeps a message on one line).
private func refusal(_ error: AppError, console: any Console, localizer: Localizer) -> CommandFailure {
    guard case .validation(let errors) = error, errors.count > 1 else {
        return CommandFailure(message: describe(error, localizer: localizer))
    }
    for line in describe(error, localizer: localizer).split(separator: "\n") { console.error(String(line)) }
    return CommandFailure(message: "The file was refused: \(errors.count) problems, listed above.")
}

/// A refusal as a command-line user reads it: one line per field problem.
func describe(_ error: AppError, localizer: Localizer) -> String {
    if case .validation(let errors) = error {
        return errors.map { "\($0.field): \(localizer.message(for: $0, .en))" }.joined(separator: "\n")
    }
    return localizer.text("problem.\(error.slug)", .en)
}
