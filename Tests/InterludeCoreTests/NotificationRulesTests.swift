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
            // Every way a resolver reads a host: shorthand, octal, hex and whole-number IPv4, trailing dots,
            // IPv4 inside IPv6, and numeric hosts that are no address at all.
            "https://127.1/", "https://0177.0.0.1/", "https://0x7f.0.0.1/", "https://0x7f000001/",
            "https://2130706433/",
            "https://017700000001/", "https://10.1/", "https://192.168.257/", "https://localhost./",
            "https://127.0.0.1./", "https://foo.localhost/", "https://[0:0:0:0:0:ffff:7f00:1]/",
            "https://[::ffff:127.0.0.1]/", "https://[::ffff:10.0.0.1]/", "https://[64:ff9b::a9fe:a9fe]/",
            "https://[2002:7f00:1::]/", "https://[::]/", "https://[::127.0.0.1]/", "https://[ff02::1]/",
            "https://[fec0::1]/", "https://[2001:db8::1]/", "https://256.1.1.1/", "https://1.2.3.4.5/",
            "https://08.1.1.1/", "https://198.18.0.1/", "https://224.0.0.1/", "https://255.255.255.255/",
            "https://metadata.google.internal./x", "https://router.lan/", "https://example.org\t.evil/",
        ] {
            #expect(!PushEndpointPolicy.accepts(endpoint, allowLoopback: false), "\(endpoint)")
        }
        #expect(PushEndpointPolicy.accepts("https://fcm.googleapis.com./fcm/send/abc", allowLoopback: false))
        #expect(PushEndpointPolicy.accepts("https://[2a00:1450:4001:82a::200a]/push", allowLoopback: false))
        #expect(
            PushEndpointPolicy.accepts("https://0x5d.0xb8.0xd8.0x22/push", allowLoopback: false), "93.184.216.34 in hex"
        )
        #expect(PushEndpointPolicy.accepts("http://127.0.0.1:9000/push/1", allowLoopback: true))
        #expect(PushEndpointPolicy.accepts("http://127.1:9000/push/1", allowLoopback: true))
        #expect(!PushEndpointPolicy.accepts("http://10.0.0.5/push", allowLoopback: true))
        #expect(!PushEndpointPolicy.accepts("http://example.org/push", allowLoopback: true))
    }

    @Test("addresses are read as the resolver reads them")
    func addresses() {
        #expect(NetworkAddress.parse(host: "127.1") == .address(.v4(0x7F00_0001)))
        #expect(NetworkAddress.parse(host: "0177.0.0.1") == .address(.v4(0x7F00_0001)))
        #expect(NetworkAddress.parse(host: "0x7f.1") == .address(.v4(0x7F00_0001)))
        #expect(NetworkAddress.parse(host: "2130706433") == .address(.v4(0x7F00_0001)))
        #expect(NetworkAddress.parse(host: "10.0.0.1.") == .address(.v4(0x0A00_0001)))
        #expect(NetworkAddress.parse(host: "1.2.3.0400") == .invalid)
        #expect(NetworkAddress.parse(host: "4294967296") == .invalid)
        #expect(NetworkAddress.parse(host: "push.example.") == .name("push.example"))
        #expect(NetworkAddress.parse(host: "1.2.3.example") == .name("1.2.3.example"))
        #expect(NetworkAddress.parse(host: "[::ffff:7f00:1]") == NetworkAddress.parse(host: "::ffff:127.0.0.1"))
        #expect(NetworkAddress.parse(host: "[fe80::1%25eth0]") == .invalid)
        #expect(NetworkAddress.parse(host: "1::2::3") == .invalid)
        #expect(NetworkAddress.parse(host: "[::ffff:127.0.0.1]").isLoopbackAddress)
        #expect(PushEndpointPolicy.permits(.v4(0x5DB8_D822), allowLoopback: false))
        #expect(!PushEndpointPolicy.permits(.v4(0x7F00_0001), allowLoopback: false))
        #expect(PushEndpointPolicy.permits(.v4(0x7F00_0001), allowLoopback: true))
        #expect(!PushEndpointPolicy.permits(.v4(0xC0A8_0001), allowLoopback: true))
    }

    @Test("preferences withhold a category; quiet hours postpone to their end, or withhold when it is too late")
    func preferences() {
        var preferences = NotificationPreferences.standard
        let due = at("2026-03-02T12:00")
        #expect(preferences.decision(for: .questionnaires, due: due, expires: due + 3600, in: vienna) == .send)
        preferences.questionnaires = false
        #expect(
            preferences.decision(for: .questionnaires, due: due, expires: due + 3600, in: vienna)
                == .withhold(.preference))
        #expect(preferences.decision(for: .alerts, due: due, expires: due + 3600, in: vienna) == .send)

        preferences = .standard
        preferences.quietHours = .init(start: LocalTime("22:00")!, end: LocalTime("07:00")!)
        let late = at("2026-03-02T23:30")
        #expect(
            preferences.decision(for: .appointments, due: late, expires: at("2026-03-03T10:00"), in: vienna)
                == .postpone(until: at("2026-03-03T07:00")))
        let early = at("2026-03-03T05:00")
        #expect(
            preferences.decision(for: .appointments, due: early, expires: at("2026-03-03T10:00"), in: vienna)
                == .postpone(until: at("2026-03-03T07:00")))
        #expect(
            preferences.decision(for: .questionnaires, due: late, expires: late + 1800, in: vienna)
                == .withhold(.quietHours))
        #expect(
            preferences.decision(for: .questionnaires, due: at("2026-03-03T07:00"), expires: late + 86_400, in: vienna)
                == .send)

        preferences.quietHours = .init(start: LocalTime("13:00")!, end: LocalTime("15:00")!)
        #expect(
            preferences.decision(
                for: .messages, due: at("2026-03-02T14:00"), expires: at("2026-03-02T20:00"), in: vienna)
                == .postpone(until: at("2026-03-02T15:00")))
        preferences.quietHours = .init(start: LocalTime("13:00")!, end: LocalTime("13:00")!)
        #expect(throws: ValidationFailure.self) { try preferences.validate() }
    }

    @Test(
        "the hourly ceiling: twelve in any hour, then a wait until the oldest is an hour old, or nothing when too late; alerts always"
    )
    func hourlyCeiling() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let sent = (0..<12).map { now.addingTimeInterval(Double(-3000 + $0 * 60)) }
        let later = now.addingTimeInterval(7200)
        #expect(
            NotificationCeiling.decision(for: .questionnaires, sent: Array(sent.prefix(11)), now: now, expires: later)
                == .send)
        #expect(
            NotificationCeiling.decision(for: .questionnaires, sent: sent, now: now, expires: later)
                == .postpone(until: now.addingTimeInterval(600)))
        #expect(
            NotificationCeiling.decision(for: .messages, sent: sent, now: now, expires: now.addingTimeInterval(300))
                == .withhold(.hourlyCeiling))
        #expect(NotificationCeiling.decision(for: .alerts, sent: sent + sent, now: now, expires: later) == .send)
        let older = sent.map { $0.addingTimeInterval(-3600) }
        #expect(
            NotificationCeiling.decision(for: .questionnaires, sent: older, now: now, expires: later) == .send,
            "an hour ago is gone")
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
        #expect(
            NotificationRetry.next(afterAttempt: NotificationRetry.mostAttempts, at: now, expires: now + 86_400) == nil)
    }
}

extension NetworkAddress.Parsed {
    var isLoopbackAddress: Bool {
        if case .address(let address) = self { return address.isLoopback }
        return false
    }
}

@Suite("The daily email's moment and the stored choice")
struct MessageDigestRulesTests {
    let vienna = TimeZone(identifier: "Europe/Vienna")!

    @Test("the daily email goes at 18:00 in the person's zone: today before then, tomorrow after")
    func moment() {
        let morning = LocalDateTime("2026-12-02T09:00")!.instant(in: vienna)
        let evening = LocalDateTime("2026-12-02T18:30")!.instant(in: vienna)
        #expect(
            MessageDigest.moment(onOrAfter: morning, in: vienna)
                == LocalDateTime("2026-12-02T18:00")!.instant(in: vienna))
        #expect(
            MessageDigest.moment(onOrAfter: evening, in: vienna)
                == LocalDateTime("2026-12-03T18:00")!.instant(in: vienna))
        let six = LocalDateTime("2026-12-02T18:00")!.instant(in: vienna)
        #expect(MessageDigest.moment(onOrAfter: six, in: vienna) == six)
    }

    @Test("choices stored before the daily email existed read as wanting it; a stored choice is kept")
    func decoding() throws {
        let old = Data(#"{"questionnaires":true,"interventions":true,"appointments":false,"messages":true}"#.utf8)
        #expect(try JSONDecoder().decode(NotificationPreferences.self, from: old).messageEmails == .daily)
        var each = NotificationPreferences.standard
        each.messageEmails = .each
        let stored = try JSONEncoder().encode(each)
        #expect(try JSONDecoder().decode(NotificationPreferences.self, from: stored) == each)
    }
}
