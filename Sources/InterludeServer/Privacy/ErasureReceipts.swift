import Foundation
import InterludeCore
import Logging

/// Tells a person by email what an erasure removed: how many records of each kind, and when.
struct ErasureReceipts: Sendable {
    let services: AppServices

    /// `study` names the study whose data went, for an erasure of one study's data.
    func send(
        _ receipt: ErasureService.Receipt, to email: String, language: Language, zone: TimeZone = .gmt,
        study: String? = nil
    ) async {
        let localizer = services.localizer
        let lines = receipt.counts.sorted { $0.key < $1.key }.map { table, count in
            localizer.text(
                "erasure.kind", language,
                ["kind": localizer.text("erasure.table.\(table)", language), "count": String(count)])
        }
        var style = Date.FormatStyle(date: .long, time: .shortened).locale(Locale(identifier: language.rawValue))
        style.timeZone = zone
        let message = EmailComposer(localizer: localizer, publicURL: services.settings.publicURL)
            .erasureReceipt(
                to: email, lines: lines, erasedAt: receipt.erasedAt.formatted(style), study: study, language: language)
        do {
            try await services.mailer.send(message)
        } catch {
            Logger(label: "interlude.erasure").error("Erasure receipt could not be sent: \(String(describing: error))")
        }
    }
}
