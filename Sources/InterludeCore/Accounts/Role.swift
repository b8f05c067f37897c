import Foundation

/// What a user account is for; decides which parts of Interlude it may use.
public enum Role: String, Sendable, Codable, CaseIterable {
    case patient
    case therapist
    case researcher
    case admin

    /// Staff sign in to the console; patients use the patient app.
    public var isStaff: Bool { self != .patient }
}

/// The languages Interlude speaks; English is the fallback.
public enum Language: String, Sendable, Codable, CaseIterable {
    case en
    case de

    public static let fallback = Language.en

    /// Picks the best supported language from an `Accept-Language` header value.
    public static func preferred(fromAcceptLanguage header: String?) -> Language? {
        guard let header, !header.isEmpty else { return nil }
        let ranked = header.split(separator: ",").compactMap { part -> (tag: String, quality: Double)? in
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, !tag.isEmpty else { return nil }
            var quality = 1.0
            for parameter in pieces.dropFirst() where parameter.hasPrefix("q=") {
                quality = Double(parameter.dropFirst(2)) ?? 0
            }
            return (tag.lowercased(), quality)
        }
        for candidate in ranked.filter({ $0.quality > 0 }).sorted(by: { $0.quality > $1.quality }) {
            let primary = candidate.tag.split(separator: "-").first.map(String.init) ?? candidate.tag
            if let language = Language(rawValue: primary) { return language }
        }
        return nil
    }
}

/// Gender as a patient states it when pairing, and as a therapist states it in their profile.
public enum Gender: String, Sendable, Codable, CaseIterable {
    case female
    case male
    case diverse
    case unspecified
}

/// IANA time zone identifiers, checked against the system's zone database.
public enum TimeZoneName {
    public static func isValid(_ identifier: String) -> Bool {
        guard !identifier.isEmpty, identifier.count <= 64 else { return false }
        return TimeZone(identifier: identifier) != nil
    }
}
