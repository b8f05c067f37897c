import InterludeCore
import Testing

@Suite("A firing's outcome is shown as the kind of action, never the ids it made")
struct FiringOutcomeTests {
    @Test(
        "stored outcomes read as their kind",
        arguments: [
            ("intervention 6f1c0e52-9a43-4d7e-8a57-0c3c1f5d2b11", FiringOutcome.intervention),
            ("alert 0b5f7f1e-1c1d-4d5a-9c3e-2a8f6d3b4c21", .alert),
            ("prompt 9e2d4c6b-8a1f-4e3d-b2c5-7f6a5d4c3b22", .prompt),
            ("alert: nobody to alert", .notCarriedOut),
            ("prompt: phq-9 is not published", .notCarriedOut),
            ("intervention", .notCarriedOut),
            ("", .notCarriedOut),
            ("launch missiles", .notCarriedOut),
        ])
    func reads(stored: String, expected: FiringOutcome) {
        #expect(FiringOutcome(stored: stored) == expected)
    }
}
