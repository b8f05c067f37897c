import Fluent
import Foundation
import InterludeCore

/// A staff member's own account page, built without a request: preferences, password and two-factor sign-in.
struct AccountPages: Sendable {
    struct PasswordContent: Encodable, Sendable {
        var forced: Bool
        var twoFactor: TwoFactorContent
        var preferencesSaved: Bool
        var errors: FormErrors
        var languages: [SelectOption]
        var timeZone: String
        var preferenceErrors: FormErrors
    }

    /// The two-factor section of the account page: how to set it up, or that it is on.
    struct TwoFactorContent: Encodable, Sendable {
        var enabledSince: String?
        var required: Bool
        var secret: String?
        var uri: String?
        var changed: Bool
        var errors: FormErrors
    }

    /// What the page shows besides the account: problems next to their form, what just changed.
    struct State: Sendable {
        var errors = FormErrors()
        var preferenceErrors = FormErrors()
        var twoFactorErrors = FormErrors()
        /// A time zone as typed, shown again when it was refused.
        var timeZone: String?
        var twoFactorChanged = false
        var preferencesSaved = false
    }

    let user: UserRecord
    let database: any Database
    let services: AppServices

    func account(_ state: State) async throws -> PasswordContent {
        let localizer = services.localizer
        let twoFactor = TwoFactorService(database: database, services: services)
        let setup = try await twoFactor.setup(for: user)
        let languages = Language.allCases.map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("language.\($0.rawValue)", user.language),
                selected: $0 == user.language)
        }
        return PasswordContent(
            forced: user.mustChangePassword,
            twoFactor: TwoFactorContent(
                enabledSince: user.totpEnabledAt.map(user.dateDisplay.dateTime),
                required: try await twoFactor.isRequired(),
                secret: setup?.secret, uri: setup?.uri, changed: state.twoFactorChanged, errors: state.twoFactorErrors),
            preferencesSaved: state.preferencesSaved, errors: state.errors,
            languages: languages, timeZone: state.timeZone ?? user.timeZone, preferenceErrors: state.preferenceErrors)
    }
}
