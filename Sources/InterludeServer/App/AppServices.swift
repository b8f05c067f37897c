import Foundation
import InterludeCore
import Prometheus
import Vapor

/// The dependencies every service needs, built once in `configure` and replaced in tests where needed. A class: every
/// service a request uses holds them, and a copy of the struct they were retained every field of it.
package final class AppServices: Sendable {
    package let settings: Settings
    package let clock: WallClock
    let mailer: any Mailer
    let passwords: PasswordHashing
    package let localizer: Localizer
    let serverSecret: ServerSecret
    let metrics: PrometheusCollectorRegistry
    package let cipher: FieldCipher
    /// The instruments shipped in Resources/Instruments, checked at start.
    let library: [InstrumentDefinition]
    /// Published instrument versions' definitions, read once by this process.
    let published = PublishedDefinitions()

    init(
        settings: Settings, clock: WallClock, mailer: any Mailer, passwords: PasswordHashing, localizer: Localizer,
        serverSecret: ServerSecret, metrics: PrometheusCollectorRegistry, cipher: FieldCipher,
        library: [InstrumentDefinition]
    ) {
        self.settings = settings
        self.clock = clock
        self.mailer = mailer
        self.passwords = passwords
        self.localizer = localizer
        self.serverSecret = serverSecret
        self.metrics = metrics
        self.cipher = cipher
        self.library = library
    }

    /// The same services reading the time from `clock`.
    func on(_ clock: WallClock) -> AppServices {
        AppServices(
            settings: settings, clock: clock, mailer: mailer, passwords: passwords, localizer: localizer,
            serverSecret: serverSecret, metrics: metrics, cipher: cipher, library: library)
    }
}

extension Application {
    private struct AppServicesKey: StorageKey {
        typealias Value = AppServices
    }

    package var interlude: AppServices {
        get {
            guard let services = storage[AppServicesKey.self] else {
                fatalError("configure(_:settings:) has not run on this application")
            }
            return services
        }
        set { storage[AppServicesKey.self] = newValue }
    }
}

extension Request {
    var services: AppServices { application.interlude }

    /// The language for texts in the response: an explicit choice (cookie) first, then `Accept-Language`.
    var language: Language {
        if let cookie = cookies["lang"]?.string, let language = Language(rawValue: cookie) { return language }
        return Language.preferred(fromAcceptLanguage: headers.first(name: .acceptLanguage)) ?? .fallback
    }
}
