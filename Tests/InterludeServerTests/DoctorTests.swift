import Testing

@testable import InterludeServer

@Suite("interlude doctor's verdicts")
struct DoctorTests {
    @Test("TLS is expected unless the address never leaves the machine; behind TLS a trusted proxy")
    func publicAddress() {
        #expect(DoctorRules.publicAddress("https://interlude.clinic.example", trustedProxies: 1).map(\.level) == [.ok])
        #expect(
            DoctorRules.publicAddress("https://interlude.clinic.example", trustedProxies: 0).map(\.level) == [
                .ok, .warn,
            ])
        #expect(DoctorRules.publicAddress("http://localhost:8080", trustedProxies: 0).map(\.level) == [.warn])
        let plain = DoctorRules.publicAddress("http://interlude.clinic.example", trustedProxies: 0)
        #expect(plain.map(\.level) == [.fix] && plain[0].message.contains("https://"))
    }

    @Test("secret files and the data folder readable by their owner only; the fix names the command")
    func privateFiles() {
        #expect(DoctorRules.privateFile("Data key", path: "/srv/data/data.key", mode: 0o100600).level == .ok)
        let open = DoctorRules.privateFile("Data key", path: "/srv/data/data.key", mode: 0o100644)
        #expect(
            open.level == .fix && open.message.contains("chmod 600 /srv/data/data.key") && open.message.contains("644"))
        #expect(
            DoctorRules.privateFile("Data folder", path: "/srv/data", mode: 0o40755, folder: true).message.contains(
                "chmod 700"))
        #expect(DoctorRules.privateFile("Web Push key", path: "/srv/data/vapid.key", mode: nil).level == .fix)
    }

    @Test("disk, clock and migrations have limits")
    func limits() {
        #expect(DoctorRules.disk(available: 500_000_000, path: "/srv").level == .fix)
        #expect(DoctorRules.disk(available: 3_000_000_000, path: "/srv").level == .warn)
        #expect(DoctorRules.disk(available: 50_000_000_000, path: "/srv").level == .ok)
        #expect(
            DoctorRules.clock(offset: -90).level == .fix && DoctorRules.clock(offset: 8).level == .warn
                && DoctorRules.clock(offset: 0.4).level == .ok)
        #expect(DoctorRules.migrations(pending: 0).level == .ok && DoctorRules.migrations(pending: 3).level == .fix)
        #expect(Finding(level: .fix, subject: "Disk", message: "full").line == "  FIX   Disk: full")
    }
}
