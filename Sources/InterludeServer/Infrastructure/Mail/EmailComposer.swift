import Foundation
import InterludeCore

/// Writes the emails Interlude sends, in the recipient's language, as plain text and HTML.
struct EmailComposer: Sendable {
    let localizer: Localizer
    let publicURL: String

    func verification(to address: String, token: SecretToken, language: Language) -> EmailMessage {
        let link = "\(publicURL)/app/verify?token=\(token.value)"
        return compose(to: address, kind: "verification", link: link, language: language)
    }

    func passwordReset(to address: String, token: SecretToken, language: Language) -> EmailMessage {
        let link = "\(publicURL)/app/reset-password?token=\(token.value)"
        return compose(to: address, kind: "passwordReset", link: link, language: language)
    }

    /// A therapist's invitation to set a password and be their client in Interlude.
    func invitation(to address: String, token: SecretToken, therapist: String, language: Language) -> EmailMessage {
        let link = "\(publicURL)/app/invitation?token=\(token.value)"
        func text(_ key: String) -> String {
            localizer.text("email.invitation.\(key)", language, ["therapist": therapist])
        }
        return compose(
            to: address, subject: text("subject"), body: text("body"), action: text("action"), footer: text("footer"),
            link: link, language: language)
    }

    /// A notification for someone without a device that takes push messages.
    func notification(to address: String, title: String, body: String, link: String, language: Language)
        -> EmailMessage
    {
        compose(
            to: address, subject: title, body: body, action: localizer.text("email.notification.action", language),
            footer: localizer.text("email.notification.footer", language), link: link, language: language)
    }

    /// What an erasure removed, as a receipt: one line per kind of record with its count, and when.
    /// `study` names the study when only the data given in it went.
    func erasureReceipt(to address: String, lines: [String], erasedAt: String, study: String?, language: Language)
        -> EmailMessage
    {
        let subject = localizer.text("email.erasureReceipt.subject", language)
        let greeting = localizer.text("email.greeting", language)
        let body =
            study.map { localizer.text("email.erasureReceipt.bodyStudy", language, ["when": erasedAt, "study": $0]) }
            ?? localizer.text("email.erasureReceipt.body", language, ["when": erasedAt])
        let footer = localizer.text("email.erasureReceipt.footer", language)
        let signature = localizer.text("email.signature", language)
        let plain = ([greeting, "", body, ""] + lines.map { "- \($0)" } + ["", footer, "", signature]).joined(
            separator: "\n")
        let html = """
            <!doctype html>
            <html lang="\(language.rawValue)"><head><meta charset="utf-8"><title>\(subject.htmlEscaped)</title></head>
            <body style="font-family: sans-serif; font-size: 16px; line-height: 1.5; color: #1b2733;">
            <p>\(greeting.htmlEscaped)</p>
            <p>\(body.htmlEscaped)</p>
            <ul>\(lines.map { "<li>\($0.htmlEscaped)</li>" }.joined())</ul>
            <p style="font-size: 14px; color: #4a5a6a;">\(footer.htmlEscaped)</p>
            <p>\(signature.htmlEscaped)</p>
            </body></html>
            """
        return EmailMessage(to: address, subject: subject, text: plain, html: html)
    }

    private func compose(to address: String, kind: String, link: String, language: Language) -> EmailMessage {
        func text(_ key: String) -> String { localizer.text("email.\(kind).\(key)", language) }
        return compose(
            to: address, subject: text("subject"), body: text("body"), action: text("action"), footer: text("footer"),
            link: link, language: language)
    }

    private func compose(
        to address: String, subject: String, body: String, action: String, footer: String, link: String,
        language: Language
    ) -> EmailMessage {
        let greeting = localizer.text("email.greeting", language)
        let signature = localizer.text("email.signature", language)
        let plain = [greeting, "", body, "", link, "", footer, "", signature].joined(separator: "\n")
        let html = """
            <!doctype html>
            <html lang="\(language.rawValue)"><head><meta charset="utf-8"><title>\(subject.htmlEscaped)</title></head>
            <body style="font-family: sans-serif; font-size: 16px; line-height: 1.5; color: #1b2733;">
            <p>\(greeting.htmlEscaped)</p>
            <p>\(body.htmlEscaped)</p>
            <p><a href="\(link.htmlEscaped)" style="display: inline-block; padding: 12px 20px; background: #1f5f8b; \
            color: #ffffff; text-decoration: none; border-radius: 6px;">\(action.htmlEscaped)</a></p>
            <p style="font-size: 14px;">\(link.htmlEscaped)</p>
            <p style="font-size: 14px; color: #4a5a6a;">\(footer.htmlEscaped)</p>
            <p>\(signature.htmlEscaped)</p>
            </body></html>
            """
        return EmailMessage(to: address, subject: subject, text: plain, html: html)
    }
}

extension String {
    var htmlEscaped: String {
        var result = ""
        result.reserveCapacity(count)
        for character in self {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
