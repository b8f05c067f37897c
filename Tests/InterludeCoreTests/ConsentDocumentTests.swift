import Foundation
import InterludeCore
import Testing

@Suite("Consent documents: versions, choices, standing and what changed")
struct ConsentDocumentTests {
    @Test("a participant must answer only when a version after theirs asks everyone again")
    func standing() {
        let versions = [(sequence: 1, reconsentRequired: false), (2, false), (3, true), (4, false)]
        #expect(ConsentStanding(accepted: 1, versions: versions).mustAnswer)
        #expect(ConsentStanding(accepted: 2, versions: versions).requiringSince == [3])
        #expect(!ConsentStanding(accepted: 3, versions: versions).mustAnswer)
        #expect(
            !ConsentStanding(accepted: 1, versions: Array(versions.prefix(2))).mustAnswer, "silent versions never ask")
        #expect(ConsentStanding(accepted: nil, versions: versions).mustAnswer, "an agreement to no known version")
        #expect(!ConsentStanding(accepted: nil, versions: []).mustAnswer, "a practice has no versions")
    }

    @Test("choices grant taking part, decline what is left out, and refuse what is not offered")
    func choices() throws {
        let chosen = try ConsentChoices.validate(["context": true], offered: [.context, .futureContact])
        #expect(chosen.granted == [.participation: true, .context: true, .futureContact: false])
        #expect(chosen.grants(.context))
        #expect(!chosen.grants(.researchSharing))
        #expect(throws: ValidationFailure(field: "modules.researchSharing", code: .notAllowed)) {
            try ConsentChoices.validate(["researchSharing": true], offered: [.context])
        }
        #expect(throws: ValidationFailure(field: "modules.participation", code: .required)) {
            try ConsentChoices.validate(["participation": false], offered: [])
        }
        #expect(throws: ValidationFailure(field: "modules", code: .unknown)) {
            try ConsentChoices.validate([String(repeating: "x", count: 41): true], offered: [])
        }
        let encoded = try JSONEncoder().encode(chosen)
        #expect(try JSONDecoder().decode(ConsentChoices.self, from: encoded) == chosen)
    }

    @Test("a version draft keeps the optional modules in order, once, and needs a text")
    func drafts() throws {
        let draft = try ConsentVersionDraft.validate(
            version: " 2026-2 ", texts: ["en": "Yes", "de": ""],
            modules: ["diaryWithTherapist", "participation", "context"],
            reconsentRequired: true)
        #expect(draft.version == "2026-2")
        #expect(draft.modules == [.context, .diaryWithTherapist])
        // Nothing contacts people about future studies: a new version does not offer it.
        #expect(throws: ValidationFailure(field: "modules[1]", code: .notAllowed)) {
            try ConsentVersionDraft.validate(
                version: "3", texts: ["en": "Yes"], modules: ["context", "futureContact"], reconsentRequired: false)
        }
        #expect(draft.texts.values == [.en: "Yes"])
        #expect(throws: ValidationFailure(field: "texts", code: .required)) {
            try ConsentVersionDraft.validate(version: "3", texts: [:], modules: [], reconsentRequired: false)
        }
        #expect(throws: ValidationFailure(field: "texts.fr", code: .notAllowed)) {
            try ConsentVersionDraft.validate(version: "3", texts: ["fr": "Oui"], modules: [], reconsentRequired: false)
        }
        #expect(draft.arm == nil)
    }

    @Test("a version for one arm names an arm of the study; an empty arm is everybody's")
    func armVersions() throws {
        let arms = ["app", "control"]
        let forApp = try ConsentVersionDraft.validate(
            version: "app-1", texts: ["en": "The app sends exercises."], modules: [], reconsentRequired: true,
            arm: "app", arms: arms)
        #expect(forApp.arm == "app")
        let forEverybody = try ConsentVersionDraft.validate(
            version: "2", texts: ["en": "Yes"], modules: [], reconsentRequired: false, arm: "", arms: arms)
        #expect(forEverybody.arm == nil)
        #expect(throws: ValidationFailure(field: "arm", code: .invalidValue)) {
            try ConsentVersionDraft.validate(
                version: "x-1", texts: ["en": "Yes"], modules: [], reconsentRequired: false, arm: "waitlist",
                arms: arms)
        }
        #expect(throws: ValidationFailure(field: "arm", code: .invalidValue)) {
            try ConsentVersionDraft.validate(
                version: "x-1", texts: ["en": "Yes"], modules: [], reconsentRequired: false, arm: "app", arms: [])
        }
    }

    @Test("the changes between two texts keep the new order and show removed lines where they stood")
    func lineDiff() {
        let lines = LineDiff.lines(from: "A\nB\nC", to: "A\nC\nD")
        #expect(lines == [.init(.same, "A"), .init(.removed, "B"), .init(.same, "C"), .init(.added, "D")])
        #expect(LineDiff.lines(from: "", to: "New") == [.init(.added, "New")])
        #expect(LineDiff.lines(from: "Same", to: "Same") == [.init(.same, "Same")])
    }

    @Test(
        "context outside its ranges names the field; declined context, and what the instrument does not ask for, is not kept"
    )
    func context() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(throws: ValidationFailure(field: "context.noise.dbfs", code: .outOfRange)) {
            try AnswerContext.validate(location: nil, noise: (dbfs: 3, durationS: 2, capturedAt: now))
        }
        #expect(throws: ValidationFailure(field: "context.location.longitude", code: .outOfRange)) {
            try AnswerContext.validate(
                location: (latitude: 0, longitude: .infinity, accuracyM: 5, capturedAt: now), noise: nil)
        }
        let context = try AnswerContext.validate(
            location: (latitude: 48.2, longitude: 16.4, accuracyM: 5, capturedAt: now),
            noise: (dbfs: -40, durationS: 3, capturedAt: now))
        #expect(context.kept(granted: false, asked: [.location, .noise]) == nil)
        #expect(context.kept(granted: true, asked: [.location, .noise]) == context)
        let noiseOnly = context.kept(granted: true, asked: [.noise])
        #expect(noiseOnly?.noise == context.noise && noiseOnly?.location == nil)
        #expect(context.kept(granted: true, asked: []) == nil)
    }
}
