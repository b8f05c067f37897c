import Foundation
import Testing

@testable import InterludeServer

@Suite("Time-based one-time codes")
struct TimeBasedCodeTests {
    @Test(
        "codes match the test vectors of RFC 6238 for SHA-1, SHA-256 and SHA-512",
        arguments: [
            (59, "94287082", "46119246", "90693936"), (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"), (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"), (20_000_000_000, "65353130", "77737706", "47863826"),
        ] as [(Int, String, String, String)])
    func vectors(seconds: Int, sha1: String, sha256: String, sha512: String) {
        let step = TimeBasedCode.step(at: Date(timeIntervalSince1970: TimeInterval(seconds)))
        let seed = "1234567890"
        let codes = [
            (TimeBasedCode.Algorithm.sha1, String(repeating: seed, count: 2), sha1),
            (.sha256, String(repeating: seed, count: 3) + "12", sha256),
            (.sha512, String(repeating: seed, count: 6) + "1234", sha512),
        ]
        for (algorithm, secret, expected) in codes {
            let code = TimeBasedCode(secret: Array(secret.utf8), digits: 8, algorithm: algorithm)
            #expect(code.code(step: step) == expected, "\(algorithm)")
        }
    }

    @Test("a code is taken one step either side of now, not two, and only as six digits")
    func window() {
        let code = TimeBasedCode(secret: Array("12345678901234567890".utf8))
        let now = Date(timeIntervalSince1970: 1_111_111_111)
        let step = TimeBasedCode.step(at: now)
        #expect(code.matchingStep(code.code(step: step - 1), at: now) == step - 1)
        #expect(code.matchingStep(code.code(step: step + 1), at: now) == step + 1)
        #expect(code.matchingStep(code.code(step: step - 2), at: now) == nil)
        let current = code.code(step: step)
        #expect(code.matchingStep(String(current.prefix(3)) + " " + String(current.suffix(3)), at: now) == step)
        #expect(code.matchingStep(current + "0", at: now) == nil)
        #expect(code.matchingStep("١٢٣٤٥٦", at: now) == nil)
    }
}
