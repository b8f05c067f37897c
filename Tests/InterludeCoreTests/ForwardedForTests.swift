import Foundation
import Testing

@testable import InterludeCore

@Suite("The client behind reverse proxies")
struct ForwardedForTests {
    @Test("the right-most entry no trusted proxy wrote is the client; what the client wrote itself is ignored")
    func rightMostUntrusted() {
        // The client forged "10.0.0.1"; the one proxy appended the address it saw.
        #expect(
            ForwardedFor.client(headers: ["10.0.0.1, 203.0.113.9"], peer: "127.0.0.1", trustedProxies: 1)
                == "203.0.113.9")
        // Two proxies: the outer one's entry is the client, the inner one's entry is the outer proxy.
        #expect(
            ForwardedFor.client(headers: ["1.2.3.4, 203.0.113.9, 10.1.1.1"], peer: "10.1.1.2", trustedProxies: 2)
                == "203.0.113.9")
        // Several headers count as one list, in order.
        #expect(
            ForwardedFor.client(headers: ["1.2.3.4", "203.0.113.9"], peer: nil, trustedProxies: 1) == "203.0.113.9")
        // Fewer entries than proxies: the left-most there is.
        #expect(ForwardedFor.client(headers: ["203.0.113.9"], peer: "10.1.1.2", trustedProxies: 3) == "203.0.113.9")
        // No trusted proxy: the header says nothing.
        #expect(ForwardedFor.client(headers: ["1.2.3.4"], peer: "198.51.100.7", trustedProxies: 0) == "198.51.100.7")
        #expect(ForwardedFor.client(headers: [], peer: "198.51.100.7", trustedProxies: 1) == "198.51.100.7")
        #expect(ForwardedFor.client(headers: ["1.2.3.4, "], peer: "198.51.100.7", trustedProxies: 1) == "198.51.100.7")
        #expect(ForwardedFor.client(headers: [], peer: nil, trustedProxies: 0) == "unknown")
    }
}

@Suite("Sign-in slow-down")
struct SlowDownTests {
    @Test("no delay within the free attempts, then half a second doubling per failure, never more than ten")
    func growth() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let policy = SlowDownPolicy.login
        func failures(_ count: Int) -> [Date] { (0..<count).map { now.addingTimeInterval(-Double($0)) } }
        #expect(policy.delay(failures: failures(10), now: now) == 0)
        #expect(policy.delay(failures: failures(11), now: now) == 0.5)
        #expect(policy.delay(failures: failures(12), now: now) == 1)
        #expect(policy.delay(failures: failures(14), now: now) == 4)
        #expect(policy.delay(failures: failures(60), now: now) == 10)
        #expect(policy.delay(failures: failures(100_000), now: now) == 10)
        let old = (0..<50).map { now.addingTimeInterval(-Double(16 * 60 + $0)) }
        #expect(policy.delay(failures: old, now: now) == 0)
    }
}
