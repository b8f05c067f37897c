import Foundation
import Testing

@testable import InterludeKit

@Suite("Intervention backup sealing")
struct InterventionBackupTests {
    struct Vector: Decodable {
        let passphrase: String
        let envelope: InterventionBackup.Envelope
    }

    struct Answer: Codable, Equatable {
        let answer: String
        let done: Bool
    }

    static let vector: Vector = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/intervention-backup.json")
        return try! JSONDecoder().decode(Vector.self, from: Data(contentsOf: url))
    }()

    @Test("the patient app's envelope opens here, and the same bytes seal to the same envelope")
    func sameAsTheApp() throws {
        let vector = Self.vector
        let plaintext = try InterventionBackup.open(vector.envelope, passphrase: vector.passphrase)
        let answers = try JSONDecoder().decode([String: Answer].self, from: plaintext)
        #expect(
            answers["3f1c2a9e-8d44-4a57-9b1e-2f6c1a0d7e55"]
                == Answer(answer: "Ich habe mit meiner Schwester gesprochen – es tat gut.", done: true))
        let again = try InterventionBackup.seal(
            plaintext: plaintext, passphrase: vector.passphrase, salt: Data(base64Encoded: vector.envelope.salt),
            nonce: Data(base64Encoded: vector.envelope.nonce))
        #expect(again == vector.envelope)
    }

    @Test("a wrong passphrase, a changed byte or another algorithm opens nothing")
    func refusals() throws {
        let vector = Self.vector
        #expect(throws: InterventionBackup.Failure.cannotOpen) {
            try InterventionBackup.open(vector.envelope, passphrase: "correct horse battery stapler")
        }
        var tampered = vector.envelope
        var bytes = Data(base64Encoded: tampered.ciphertext)!
        bytes[3] ^= 1
        tampered.ciphertext = bytes.base64EncodedString()
        #expect(throws: InterventionBackup.Failure.cannotOpen) {
            try InterventionBackup.open(tampered, passphrase: vector.passphrase)
        }
        var other = vector.envelope
        other.algorithm = "none"
        #expect(throws: InterventionBackup.Failure.unknownAlgorithm("none")) {
            try InterventionBackup.open(other, passphrase: vector.passphrase)
        }
    }

    @Test("values round-trip with fresh salts and nonces")
    func roundTrip() throws {
        let answers = ["a": Answer(answer: "Spoke to my sister.", done: true)]
        let first = try InterventionBackup.seal(answers, passphrase: "pass phrase")
        let second = try InterventionBackup.seal(answers, passphrase: "pass phrase")
        #expect(first.salt != second.salt && first.nonce != second.nonce)
        #expect(first.iterations == 600_000)
        #expect(try InterventionBackup.open(first, passphrase: "pass phrase", as: [String: Answer].self) == answers)
    }
}
