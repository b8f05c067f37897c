import Foundation

/// Renders an `EmailMessage` as an RFC 5322 message with a multipart/alternative body (text, then HTML),
/// both parts UTF-8 in base64, lines ending in CRLF.
enum MIMEMessage {
    static func render(_ message: EmailMessage, from: String, date: Date, messageID: String? = nil) -> String {
        let boundary = "=_interlude_\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        let domain =
            from.split(separator: "@").last.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "> ")) }
            ?? "localhost"
        let id = messageID ?? "<\(UUID().lowercasedText)@\(domain)>"
        var lines = [
            "From: \(encodeAddressHeader(from))",
            "To: \(message.to)",
            "Subject: \(encodeHeader(message.subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: \(id)",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        lines += base64Lines(message.text)
        lines += [
            "--\(boundary)",
            "Content-Type: text/html; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        lines += base64Lines(message.html)
        lines += ["--\(boundary)--", ""]
        return lines.joined(separator: "\r\n")
    }

    /// A header value as an RFC 2047 encoded word when it is not plain ASCII.
    static func encodeHeader(_ value: String) -> String {
        let clean = value.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        if clean.unicodeScalars.allSatisfy({ $0.isASCII }) { return clean }
        return "=?UTF-8?B?\(Data(clean.utf8).base64EncodedString())?="
    }

    /// `Name <address>` with the display name encoded when needed.
    static func encodeAddressHeader(_ value: String) -> String {
        guard let open = value.lastIndex(of: "<") else { return value }
        let name = value[..<open].trimmingCharacters(in: .whitespaces)
        let address = value[open...]
        return name.isEmpty ? String(address) : "\(encodeHeader(name)) \(address)"
    }

    /// The bare address of `Name <address>`.
    static func address(of value: String) -> String {
        guard let open = value.lastIndex(of: "<"), let close = value.lastIndex(of: ">"), open < close else {
            return value.trimmingCharacters(in: .whitespaces)
        }
        return String(value[value.index(after: open)..<close])
    }

    private static func base64Lines(_ text: String) -> [String] {
        let encoded = Data(text.utf8).base64EncodedString()
        var lines: [String] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[index..<end]))
            index = end
        }
        return lines
    }

    private static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter.string(from: date)
    }
}
