import Foundation
import Testing

@testable import InterludeCore

@Suite("Study rules")
struct StudyRulesTests {
    func decide(
        _ mode: JoinMode, status: StudyStatus = .running, accepted: String = "1", enrolled: Bool = false,
        passwordMatches: Bool = false
    ) throws(JoinRefusal) -> EnrollmentStatus {
        try JoinDecision.decide(
            joinMode: mode, status: status, currentConsentVersion: "1", acceptedConsentVersion: accepted,
            hasCurrentEnrollment: enrolled, passwordMatches: passwordMatches)
    }

    @Test("open and password studies start active, approval studies start as a request")
    func accepted() throws {
        #expect(try decide(.open) == .active)
        #expect(try decide(.password, passwordMatches: true) == .active)
        #expect(try decide(.approval) == .requested)
    }

    @Test("refusals, in the order a participant should hear them")
    func refused() {
        #expect(throws: JoinRefusal.studyClosed) { try decide(.open, status: .closed, accepted: "0") }
        #expect(throws: JoinRefusal.notJoinable) { try decide(.pairingCode) }
        #expect(throws: JoinRefusal.alreadyEnrolled) { try decide(.open, enrolled: true) }
        #expect(throws: JoinRefusal.consentVersionOutdated) { try decide(.open, accepted: "0") }
        #expect(throws: JoinRefusal.wrongPassword) { try decide(.password) }
    }

    @Test("a study draft needs a title, consent, a join mode and, for password studies, a password")
    func draft() throws {
        let draft = try StudyDraft.validate(
            title: [.en: " Stress ", .de: " Stress im Alltag "], description: [:], consentText: [.de: "Ich stimme zu"],
            consentVersion: "1", joinMode: "password",
            joinPassword: "secret", status: nil)
        #expect(draft.title == "Stress")
        #expect(draft.titles.text(.de) == "Stress im Alltag")
        #expect(draft.descriptions.values.isEmpty)
        // Written in German only: the German text is what every reader gets.
        #expect(draft.consentTexts.values == [.de: "Ich stimme zu"])
        #expect(draft.consentText == "Ich stimme zu")
        #expect(draft.status == .running)
        #expect(draft.joinPassword == "secret")
        let kept = try StudyDraft.validate(
            title: [.en: "Stress"], description: [:], consentText: [.en: "I agree"], consentVersion: "1",
            joinMode: "password",
            joinPassword: "", status: "closed", hasPassword: true)
        #expect(kept.joinPassword == nil)
        do {
            _ = try StudyDraft.validate(
                title: [.en: "", .de: " "], description: [.de: String(repeating: "d", count: 5001)], consentText: [:],
                consentVersion: "1", joinMode: "pairingCode", joinPassword: nil, status: "paused")
            Issue.record("an invalid draft was accepted")
        } catch {
            #expect(error.errors.map(\.field) == ["title", "descriptions.de", "consentText", "joinMode", "status"])
        }
    }

    @Test("rate limits: the attempt after the limit waits until the oldest failure leaves the window")
    func rateLimit() {
        let policy = RateLimitPolicy(limit: 3, window: 60)
        let start = Date(timeIntervalSince1970: 0)
        let failures = [0, 10, 20].map { start.addingTimeInterval($0) }
        #expect(policy.retryAfter(failures: Array(failures.prefix(2)), now: start.addingTimeInterval(21)) == nil)
        #expect(policy.retryAfter(failures: failures, now: start.addingTimeInterval(21)) == 39)
        #expect(policy.retryAfter(failures: failures, now: start.addingTimeInterval(60.5)) == nil)
        #expect(
            policy.retryAfter(failures: failures + [start.addingTimeInterval(30)], now: start.addingTimeInterval(61))
                == 9)
        #expect(RateLimitPolicy.pairing.limit == 5)
        #expect(RateLimitPolicy.login.limit == 10)
        #expect(RateLimitPolicy.login.window == 15 * 60)
    }
}
