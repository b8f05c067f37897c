import Foundation
import Testing

@testable import InterludeCore

/// Tests/Corpus/manifest.json: questionnaire files in the shapes published ones take, and what each imports as.
struct ImportCorpus: Decodable {
    struct Entry: Decodable, CustomTestStringConvertible, Sendable {
        var file: String
        var instruments: [Expected]?
        var notes: [[String]]?
        var problems: [[String]]?

        var testDescription: String { file }
    }

    struct Expected: Decodable, Sendable {
        struct ExpectedSection: Decodable, Sendable {
            var title: String?
            var items: [[String]]
        }

        var key: String
        var title: String
        var sections: [ExpectedSection]
        var answers: Answers
        var visible: [String]
        var scores: [String: Double]
    }

    var files: [Entry]

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Corpus")

    static let loaded: ImportCorpus = {
        try! JSONDecoder().decode(
            ImportCorpus.self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
    }()
}

@Suite("The import corpus: each file arrives as its authors wrote it, or is refused by place")
struct ImportCorpusTests {
    /// The file read as its extension says: a REDCap dictionary or a FHIR Questionnaire.
    static func read(_ file: String) throws -> REDCapImport.Result {
        let data = try Data(contentsOf: ImportCorpus.folder.appendingPathComponent(file))
        if file.hasSuffix(".csv") {
            return try REDCapImport.instruments(fromCSV: String(decoding: data, as: UTF8.self))
        }
        let result = try FHIRQuestionnaireImport.read(from: data)
        return REDCapImport.Result(instruments: [result.definition], notes: result.notes)
    }

    @Test("item by item, notes, visibility and scores as the manifest says", arguments: ImportCorpus.loaded.files)
    func entry(_ entry: ImportCorpus.Entry) throws {
        guard let expected = entry.instruments else {
            #expect(throws: ValidationFailure.self) { try Self.read(entry.file) }
            do {
                _ = try Self.read(entry.file)
            } catch let failure as ValidationFailure {
                #expect(failure.errors.map { [$0.field, $0.code.rawValue] } == entry.problems)
                #expect(failure.errors.allSatisfy { $0.detail != nil })
            }
            return
        }
        let result = try Self.read(entry.file)
        #expect(result.instruments.map(\.key) == expected.map(\.key))
        #expect(result.notes.map { [$0.kind.rawValue, $0.subject] } == entry.notes)
        for (definition, wanted) in zip(result.instruments, expected) {
            #expect(definition.problems() == [], "\(definition.key)")
            #expect(definition.title.text(.en) == wanted.title)
            #expect(definition.sections.map { $0.title?.text(.en) } == wanted.sections.map(\.title))
            #expect(
                definition.sections.map { $0.items.map { [$0.id, $0.type.rawValue] } } == wanted.sections.map(\.items),
                "\(definition.key)")
            #expect(definition.problems(in: wanted.answers) == [], "\(definition.key)")
            #expect(InstrumentLogic(definition).visibility(wanted.answers).items == Set(wanted.visible))
            let scores = definition.scores(for: wanted.answers)
            #expect(
                Dictionary(uniqueKeysWithValues: scores.compactMap { s in s.value.map { (s.id, $0) } }) == wanted.scores
            )
            for item in definition.items {
                #expect(!item.text.text(.en).contains("\r") && !item.id.isEmpty)
                for option in definition.options(of: item) {
                    #expect(!option.code.contains("\r") && !option.label.text(.en).contains("\r"))
                }
            }
        }
    }
}
