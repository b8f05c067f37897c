import Foundation

/// The 8-digit numeric code a therapist hands a patient so the patient's account pairs with the therapist.
public struct PairingCode: Hashable, Sendable, CustomStringConvertible {
    public static let digits = 8

    public let value: String

    public var description: String { value }

    /// The code in two groups of four, as printed on the code sheet.
    public var grouped: String { "\(value.prefix(4)) \(value.suffix(4))" }

    /// Accepts what a person types: spaces and dashes between digits are ignored.
    public init?(_ typed: String) {
        let digitsOnly = typed.filter { !$0.isWhitespace && $0 != "-" }
        guard digitsOnly.count == Self.digits, digitsOnly.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return nil
        }
        value = digitsOnly
    }

    public static func make<G: RandomNumberGenerator>(using generator: inout G) -> PairingCode {
        let number = UInt32.random(in: 0..<100_000_000, using: &generator)
        let text = String(number)
        return PairingCode(String(repeating: "0", count: digits - text.count) + text)!
    }
}

/// Where a pairing code stands in its life.
public enum PairingCodeStatus: String, Sendable, Codable, CaseIterable {
    case open
    case redeemed
    case expired

    public static func of(expiresAt: Date, redeemedAt: Date?, now: Date) -> PairingCodeStatus {
        if redeemedAt != nil { return .redeemed }
        return now >= expiresAt ? .expired : .open
    }
}

/// A checked request by a patient to redeem a pairing code.
public struct PairingRequest: Sendable, Equatable {
    public var code: PairingCode
    public var dateOfBirth: LocalDate
    public var gender: Gender

    public static func validate(code: String, dateOfBirth: String, gender: String, today: LocalDate)
        throws(ValidationFailure) -> PairingRequest
    {
        var validator = FieldValidator()
        let parsedCode = PairingCode(code)
        if code.isEmpty {
            validator.add("code", .required)
        } else if parsedCode == nil {
            validator.add("code", .invalidFormat)
        }
        let details = Self.details(dateOfBirth: dateOfBirth, gender: gender, today: today, into: &validator)
        try validator.check()
        return PairingRequest(code: parsedCode!, dateOfBirth: details!.dateOfBirth, gender: details!.gender)
    }

    /// What a client tells their therapist on joining the practice: a date of birth in the past (after 1900) and
    /// a gender; nil with the problems added when either is unusable.
    public static func details(
        dateOfBirth: String, gender: String, today: LocalDate, into validator: inout FieldValidator
    )
        -> (dateOfBirth: LocalDate, gender: Gender)?
    {
        let birth = LocalDate(dateOfBirth)
        if dateOfBirth.isEmpty {
            validator.add("dateOfBirth", .required)
        } else if let birth {
            if birth >= today || birth.year < 1900 { validator.add("dateOfBirth", .invalidValue) }
        } else {
            validator.add("dateOfBirth", .invalidFormat)
        }
        let parsedGender = Gender(rawValue: gender)
        if parsedGender == nil { validator.add("gender", gender.isEmpty ? .required : .invalidValue) }
        guard let birth, let parsedGender, birth < today, birth.year >= 1900 else { return nil }
        return (birth, parsedGender)
    }
}
