import Fluent
import Foundation
import InterludeCore
import Vapor

/// `interlude instruments import FILE [--publish]`: imports Interlude JSON, a FHIR Questionnaire or a REDCap data
/// dictionary as a new draft version of an instrument of the whole installation (shared with every study),
/// published at once with `--publish`.
struct InstrumentsCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "action", help: "import")
        var action: String

        @Argument(name: "file", help: "The file to import (.json or .csv).")
        var file: String

        @Flag(name: "publish", help: "Publish the imported version at once.")
        var publish: Bool
    }

    var help: String { "Imports a questionnaire: instruments import FILE [--publish]" }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        let governance = InstrumentGovernance(database: app.db, services: app.interlude)
        switch signature.action {
        case "import":
            guard let data = FileManager.default.contents(atPath: signature.file) else {
                throw CommandFailure(message: "No file at \(signature.file).")
            }
            do {
                let (definition, format) = try InstrumentCatalog.parse(data, format: nil)
                guard
                    let importer = try await UserRecord.query(on: app.db)
                        .filter(\.$role == Role.admin)
                        .filter(\.$deactivatedAt == nil)
                        .sort(\.$createdAt).first()
                else { throw CommandFailure(message: "Create an administrator first; imports are recorded under one.") }
                // The operator imports for the whole installation, as its first administrator.
                var record = try await governance.importDraft(definition, format: format, for: nil, by: importer)
                if signature.publish { record = try await governance.publish(record.key, record.version, by: importer) }
                context.console.print(
                    "Imported \(record.key) version \(record.version) as \(record.status.rawValue) (\(format.rawValue))."
                )
            } catch let failure as ValidationFailure {
                throw CommandFailure(message: describe(failure.appError, localizer: app.interlude.localizer))
            } catch let failure as AppError {
                throw CommandFailure(message: describe(failure, localizer: app.interlude.localizer))
            }
        default:
            throw CommandFailure(message: "Use 'instruments import FILE [--publish]'.")
        }
    }
}

/// A refusal as a command-line user reads it: one line per field problem.
func describe(_ error: AppError, localizer: Localizer) -> String {
    if case .validation(let errors) = error {
        return errors.map { "\($0.field): \(localizer.message(for: $0, .en))" }.joined(separator: "\n")
    }
    return localizer.text("problem.\(error.slug)", .en)
}
