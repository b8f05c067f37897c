import Foundation
import Testing

@testable import InterludeCore

@Suite("Notification rules")
struct NotificationRulesTests {
    let vienna = TimeZone(identifier: "Europe/Vienna")!

    func at(_ text: String) -> Date { LocalDateTime(text)!.instant(in: vienna) }

    @Test("push endpoints: https to public hosts only; loopback only when allowed")
    func endpoints() {
        for endpoint in [
            "https://fcm.googleapis.com/fcm/send/abc", "https://updates.push.services.mozilla.com/wpush/v2/x",
            "https://web.push.apple.com/QGz", "https://93.184.216.34/push",
        ] {
            #expect(PushEndpointPolicy.accepts(endpoint, allowLoopback: false), "\(endpoint)")
        }
        for endpoint in [
            "http://fcm.googleapis.com/fcm/send/abc", "https://localhost/push", "https://127.0.0.1/push",
            "https://10.0.0.5/push", "https://192.168.1.1/", "https://172.20.0.1/", "https://169.254.169.254/latest",
            "https://[::1]/push", "https://[fd00::1]/push", "https://[fe80::1]/push", "https://printer.local/x",
            "https://metadata.internal/x", "https://intranet/x", "ftp://example.org/x", "not a url",
            "https://user:secret@example.org/x", "https://100.64.0.1/", "https://0.0.0.0/",
        ] {
            #expect(!PushEndpointPolicy.accepts(endpoint, allowLoopback: false), "\(endpoint)")
        }
        #expect(PushEndpointPolicy.accepts("http://127.0.0.1:9000/push/1", allowLoopback: true))
        #expect(!PushEndpointPolicy.accepts("http://10.0.0.5/push", allowLoopback: true))
        #expect(!PushEndpointPolicy.accepts("http://example.org/push", allowLoopback: true))
    }

    @Test("preferences withhold a category; quiet hours postpone to their end, or withhold when it is too late")
    func preferences() {
        var preferences = NotificationPreferences.standard
        let due = at("2026-03-02T12:00")
        #expect(preferences.decision(for: .questionnaires, due: due, expires: due + 3600, in: vienna) == .send)
        preferences.questionnaires = false
        #expect(preferences.decision(for: .questionnaires, due: due, expires: due + 3600, in: vienna) == .withhold(.preference))
        #expect(preferences.decision(for: .alerts, due: due, expires: due + 3600, in: vienna) == .send)

        preferences = .standard
        preferences.quietHours = .init(start: LocalTime("22:00")!, end: LocalTime("07:00")!)
        let late = at("2026-03-02T23:30")
        #expect(preferences.decision(for: .appointments, due: late, expires: at("2026-03-03T10:00"), in: vienna)
            == .postpone(until: at("2026-03-03T07:00")))
        let early = at("2026-03-03T05:00")
        #expect(preferences.decision(for: .appointments, due: early, expires: at("2026-03-03T10:00"), in: vienna)
            == .postpone(until: at("2026-03-03T07:00")))
        #expect(preferences.decision(for: .questionnaires, due: late, expires: late + 1800, in: vienna) == .withhold(.quietHours))
        #expect(preferences.decision(for: .questionnaires, due: at("2026-03-03T07:00"), expires: late + 86_400, in: vienna) == .send)

        preferences.quietHours = .init(start: LocalTime("13:00")!, end: LocalTime("15:00")!)
        #expect(preferences.decision(for: .messages, due: at("2026-03-02T14:00"), expires: at("2026-03-02T20:00"), in: vienna)
            == .postpone(until: at("2026-03-02T15:00")))
        preferences.quietHours = .init(start: LocalTime("13:00")!, end: LocalTime("13:00")!)
        #expect(throws: ValidationFailure.self) { try preferences.validate() }
    }

    @Test("retries back off from 30 seconds, doubling, capped at two hours, and stop at the expiry")
    func retries() {
        #expect(NotificationRetry.delay(afterAttempt: 1) == 30)
        #expect(NotificationRetry.delay(afterAttempt: 2) == 60)
        #expect(NotificationRetry.delay(afterAttempt: 5) == 480)
        #expect(NotificationRetry.delay(afterAttempt: 20) == 7200)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(NotificationRetry.next(afterAttempt: 1, at: now, expires: now + 3600) == now + 30)
        #expect(NotificationRetry.next(afterAttempt: 3, at: now, expires: now + 100) == nil)
        #expect(NotificationRetry.next(afterAttempt: NotificationRetry.mostAttempts, at: now, expires: now + 86_400) == nil)
    }
}
