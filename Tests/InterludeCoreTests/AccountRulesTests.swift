import Foundation
import Testing

@testable import InterludeCore

@Suite("Account rules")
struct AccountRulesTests {
    @Test(
        "addresses people actually use are accepted and normalised",
        arguments: [
            ("Ada@Example.org", "ada@example.org"), (" max.mustermann@uni-klu.ac.at ", "max.mustermann@uni-klu.ac.at"),
            ("a+tag@sub.domain.example", "a+tag@sub.domain.example"),
        ])
    func validEmails(raw: String, normalised: String) {
        #expect(EmailAddress(raw)?.value == normalised)
    }

    @Test(
        "malformed addresses are refused",
        arguments: [
            "", "plain", "@example.org", "ada@", "ada@example", "ada@@example.org", "ada example@x.org", "ada@-x.org",
            "ada@x..org", ".ada@example.org", "ada.@example.org", "a<b>@example.org", "ada@example.o",
            String(repeating: "a", count: 65) + "@example.org",
        ])
    func invalidEmails(raw: String) {
        #expect(EmailAddress(raw) == nil)
    }

    @Test("a password needs 10 characters, at most 256, and must not be the email")
    func passwordPolicy() {
        func codes(_ password: String?, email: String = "ada@example.org") -> [FieldError.Code] {
            var validator = FieldValidator()
            PasswordPolicy.check(password, email: email, into: &validator)
            return validator.errors.map(\.code)
        }
        #expect(codes(nil) == [.required])
        #expect(codes("123456789") == [.tooShort])
        #expect(codes("1234567890") == [])
        #expect(codes(String(repeating: "x", count: 257)) == [.tooLong])
        #expect(codes("ADA@example.org") == [.sameAsEmail])
    }

    @Test("registration reports every problem at once")
    func registration() throws {
        #expect(throws: ValidationFailure.self) {
            try Registration.validate(
                email: "x", password: "short", privacyPolicyVersion: "1", currentPrivacyPolicyVersion: "2",
                shareWithResearch: false, locale: "fr", timeZone: "Nowhere", name: nil)
        }
        do {
            _ = try Registration.validate(
                email: "x", password: "short", privacyPolicyVersion: "1", currentPrivacyPolicyVersion: "2",
                shareWithResearch: false, locale: "fr", timeZone: "Nowhere", name: nil)
        } catch {
            #expect(error.errors.map(\.field) == ["email", "password", "privacyPolicyVersion", "locale", "timeZone"])
        }
        let valid = try Registration.validate(
            email: "Ada@Example.org", password: "long enough password", privacyPolicyVersion: "2",
            currentPrivacyPolicyVersion: "2", shareWithResearch: true, locale: "de", timeZone: "Australia/Lord_Howe",
            name: "  Ada  ")
        #expect(valid.email.value == "ada@example.org")
        #expect(valid.language == .de)
        #expect(valid.name == "Ada")
    }

    @Test("Accept-Language picks the best supported language")
    func acceptLanguage() {
        #expect(Language.preferred(fromAcceptLanguage: "de-AT,de;q=0.9,en;q=0.8") == .de)
        #expect(Language.preferred(fromAcceptLanguage: "fr-FR,fr;q=0.9,en;q=0.5,de;q=0.4") == .en)
        #expect(Language.preferred(fromAcceptLanguage: "en;q=0.1, de;q=0.9") == .de)
        #expect(Language.preferred(fromAcceptLanguage: "fr") == nil)
        #expect(Language.preferred(fromAcceptLanguage: nil) == nil)
    }

    @Test("pairing codes: 8 digits, typed with spaces or dashes, drawn uniformly")
    func pairingCodes() {
        #expect(PairingCode("1234 5678")?.value == "12345678")
        #expect(PairingCode("1234-5678")?.grouped == "1234 5678")
        #expect(PairingCode("1234567") == nil)
        #expect(PairingCode("12345678 9") == nil)
        #expect(PairingCode("1234567a") == nil)
        #expect(PairingCode("１２３４５６７８") == nil)
        var generator = SystemRandomNumberGenerator()
        let codes = (0..<200).map { _ in PairingCode.make(using: &generator).value }
        #expect(codes.allSatisfy { $0.count == 8 })
        #expect(Set(codes).count > 190)
    }

    @Test("a code's status follows redemption and expiry")
    func pairingCodeStatus() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(PairingCodeStatus.of(expiresAt: now.addingTimeInterval(1), redeemedAt: nil, now: now) == .open)
        #expect(PairingCodeStatus.of(expiresAt: now, redeemedAt: nil, now: now) == .expired)
        #expect(PairingCodeStatus.of(expiresAt: now.addingTimeInterval(-1), redeemedAt: now, now: now) == .redeemed)
    }

    @Test("pseudonyms avoid look-alike characters")
    func pseudonyms() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let pseudonym = Pseudonym.make(using: &generator)
            #expect(Pseudonym.isWellFormed(pseudonym))
            #expect(!pseudonym.dropFirst(2).contains { "01ILOU".contains($0) })
        }
        #expect(!Pseudonym.isWellFormed("P-0OOOOO"))
    }

    @Test("pairing input: a real past date of birth and a known gender")
    func pairingRequest() throws {
        let today = LocalDate("2026-03-02")!
        let request = try PairingRequest.validate(
            code: "1234 5678", dateOfBirth: "1990-05-17", gender: "diverse", today: today)
        #expect(request.dateOfBirth.description == "1990-05-17")
        for (dateOfBirth, code) in [
            ("2026-03-02", FieldError.Code.invalidValue), ("1899-12-31", .invalidValue),
            ("1990-02-30", .invalidFormat), ("17.05.1990", .invalidFormat),
        ] {
            #expect(throws: ValidationFailure([FieldError(field: "dateOfBirth", code: code)])) {
                try PairingRequest.validate(code: "12345678", dateOfBirth: dateOfBirth, gender: "male", today: today)
            }
        }
    }

    @Test("local dates parse strictly and know which day an instant falls on in a zone")
    func localDates() {
        #expect(LocalDate("2024-02-29") != nil)
        #expect(LocalDate("2023-02-29") == nil)
        #expect(LocalDate("2024-2-9") == nil)
        let instant = Date(timeIntervalSince1970: 1_772_492_400)  // 2026-03-02T23:00:00Z
        #expect(LocalDate(instant, in: TimeZone(identifier: "Europe/Vienna")!).description == "2026-03-03")
        #expect(LocalDate(instant, in: TimeZone(identifier: "America/New_York")!).description == "2026-03-02")
    }

    @Test("profile edits: only given fields change; an empty name removes it")
    func profileChange() throws {
        let change = try ProfileChange.validate(
            name: "  ", locale: nil, timeZone: "Europe/Vienna", shareWithResearch: false)
        #expect(change.name == .some(nil))
        #expect(change.language == nil)
        #expect(change.timeZone == "Europe/Vienna")
        #expect(throws: ValidationFailure.self) {
            try ProfileChange.validate(name: nil, locale: "xx", timeZone: nil, shareWithResearch: nil)
        }
    }
}
