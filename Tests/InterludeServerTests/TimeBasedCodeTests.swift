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
        // setup
        let step = TimeBasedCode.step(at: Date(timeIntervalSince1970: TimeInterval(seconds)))
        let seed = "1234567890"
        let codes = [
            (TimeBasedCode.Algorithm.sha1, String(repeating: seed, count: 2), sha1),
            (.sha256, String(repeating: seed, count: 3) + "12", sha256),
            (.sha512, String(repeating: seed, count: 6) + "1234", sha512),
        ]

        // act / verify
        for (algorithm, secret, expected) in codes {
            let code = TimeBasedCode(secret: Array(secret.utf8), digits: 8, algorithm: algorithm)
            #expect(code.code(step: step) == expected, "\(algorithm)")
        }
    }

    @Test(
        "a code is taken one step either side of now, not two, and only as six digits",
        arguments: [
            ("the step before", -1, "", -1 as Int?), ("the step after", 1, "", 1), ("two steps before", -2, "", nil),
            ("typed with a space in the middle", 0, "space", 0), ("seven digits", 0, "extra digit", nil),
            ("Arabic-Indic digits", 0, "arabic", nil),
        ])
    func window(_ label: String, offset: Int, typed: String, accepted: Int?) {
        // setup
        let code = TimeBasedCode(secret: Array("12345678901234567890".utf8))
        let now = Date(timeIntervalSince1970: 1_111_111_111)
        let step = TimeBasedCode.step(at: now)
        let shown = code.code(step: step + Int64(offset))
        let input =
            switch typed {
            case "space": String(shown.prefix(3)) + " " + String(shown.suffix(3))
            case "extra digit": shown + "0"
            case "arabic": "١٢٣٤٥٦"
            default: shown
            }

        // act
        let matched = code.matchingStep(input, at: now)

        // verify
        #expect(matched == accepted.map { step + Int64($0) }, "\(label)")
    }
}
