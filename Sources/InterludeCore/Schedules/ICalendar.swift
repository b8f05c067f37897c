import Foundation

/// An iCalendar (RFC 5545) feed of appointments, for a phone's own calendar app.
public enum ICalendar {
    public struct Event: Sendable {
        public var uid: String
        public var title: String
        public var startsAt: Date
        public var endsAt: Date
        public var description: String?
        public var updatedAt: Date

        public init(uid: String, title: String, startsAt: Date, endsAt: Date, description: String?, updatedAt: Date) {
            self.uid = uid
            self.title = title
            self.startsAt = startsAt
            self.endsAt = endsAt
            self.description = description
            self.updatedAt = updatedAt
        }
    }

    public static func render(calendarName: String, events: [Event]) -> String {
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Interlude//Appointments//EN", "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH", "X-WR-CALNAME:\(escape(calendarName))",
        ]
        for event in events {
            lines += [
                "BEGIN:VEVENT", "UID:\(escape(event.uid))", "DTSTAMP:\(timestamp(event.updatedAt))",
                "DTSTART:\(timestamp(event.startsAt))", "DTEND:\(timestamp(event.endsAt))",
                "SUMMARY:\(escape(event.title))",
            ]
            if let description = event.description, !description.isEmpty {
                lines.append("DESCRIPTION:\(escape(description))")
            }
            lines.append("END:VEVENT")
        }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// UTC in the basic format, e.g. `20260310T140000Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: date)
    }

    /// Backslash, semicolon, comma and line breaks escaped as TEXT values require; other control characters, which
    /// a TEXT value may not hold (tab aside), are dropped.
    static func escape(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: ";", with: "\\;")
            .replacingOccurrences(of: ",", with: "\\,")
            .replacingOccurrences(of: "\r\n", with: "\\n")
            .replacingOccurrences(of: "\n", with: "\\n")
            .replacingOccurrences(of: "\r", with: "\\n")
        return String(
            String.UnicodeScalarView(
                escaped.unicodeScalars.filter { scalar in
                    scalar == "\t" || !(scalar.value < 0x20 || scalar.value == 0x7F)
                }))
    }

    /// Lines longer than 75 octets continue on the next line after a space, never inside a character.
    static func fold(_ line: String) -> String {
        var result = ""
        var current = ""
        var octets = 0
        for character in line {
            let size = String(character).utf8.count
            if octets + size > 75 {
                result += current + "\r\n "
                current = ""
                octets = 1
            }
            current.append(character)
            octets += size
        }
        return result + current
    }
}
