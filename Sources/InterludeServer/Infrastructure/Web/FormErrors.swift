import Foundation
import InterludeCore
import Vapor

/// Messages to show next to form fields, and one for the whole form, after a refused submission.
struct FormErrors: Encodable, Sendable {
    var fields: [String: String] = [:]
    /// Every problem as "place: message", for forms (file imports) whose problems have no field of their own.
    var list: [String] = []
    var form: String?
    /// The status the re-rendered form is answered with.
    var status: HTTPResponseStatus = .unprocessableEntity

    private enum CodingKeys: String, CodingKey {
        case fields
        case list
        case form
    }

    var isEmpty: Bool { fields.isEmpty && form == nil }

    /// With a problem in a text's German version under the form field's name (`titles.de` → `titleDe`).
    var withLanguageFields: FormErrors {
        var copy = self
        copy.fields = Dictionary(
            fields.map { field, message in
                (field.hasSuffix("s.de") ? String(field.dropLast(4)) + "De" : field, message)
            },
            uniquingKeysWith: { first, _ in first })
        return copy
    }

    /// The messages for an error a form can explain to the person; nil for any other error, which then
    /// becomes an error page.
    static func from(_ error: any Error, request: Request) -> FormErrors? {
        let localizer = request.services.localizer
        let language = ConsoleSession.get(request)?.user.language ?? request.language
        let appError: AppError
        switch error {
        case let failure as ValidationFailure: appError = failure.appError
        case let error as AppError: appError = error
        default: return nil
        }
        switch appError {
        case .validation(let errors):
            var result = FormErrors()
            for error in errors {
                let message = localizer.message(for: error, language)
                if result.fields[error.field] == nil { result.fields[error.field] = message }
                result.list.append("\(error.field): \(message)")
            }
            result.form = localizer.text("form.fixErrors", language)
            return result
        case .conflict, .invalidCredentials, .forbidden(.accountDeactivated), .forbidden(.notAllowed),
            .forbidden(.builtInInstrument), .rateLimited, .invalidDateTime:
            return FormErrors(form: localizer.text("problem.\(appError.slug)", language), status: appError.status)
        default:
            return nil
        }
    }
}
