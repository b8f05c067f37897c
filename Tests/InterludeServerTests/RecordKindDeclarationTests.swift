import Foundation
import InterludeCore
import Testing

@testable import InterludeServer

/// A record kind is declared once in Core (`RecordKind`) and once on the server (`RecordKind.content`); these
/// checks fail when a kind is missing from any place that must know it.
@Suite("Every record kind is known everywhere records are handled")
struct RecordKindDeclarationTests {
    private static func capitalized(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }

    @Test(
        "storage, sync, the API's kind names, the research export and the app's texts know every kind",
        arguments: RecordKind.allCases)
    func declared(_ kind: RecordKind) throws {
        #expect(kind.content.recordKind == kind, "RecordKind.content names the kind's own content")
        #expect(SyncEntity(kind).rawValue == kind.rawValue, "deletions are announced under the kind's name")
        #expect(Components.Schemas.RecordKind(rawValue: kind.rawValue) != nil, "the API document names the kind")
        #expect(RecordKind(Components.Schemas.RecordKind(kind)) == kind)
        #expect(
            Components.Schemas.SyncTombstone.EntityPayload(rawValue: kind.rawValue) != nil,
            "sync tombstones name the kind")
        #expect(!kind.content.exportColumns.isEmpty, "the research export has columns for the kind")
        #expect(RecordKind(collection: kind.collection) == kind)
        let localizer = try Localizer(directory: "Resources/Locales")
        for language in Language.allCases {
            #expect(
                localizer.text("records.kind.\(kind.rawValue)", language) != "records.kind.\(kind.rawValue)",
                "\(language)")
        }
    }

    /// The API operations of a kind: those an app creates and edits as a whole have the same five; thoughts are
    /// listed with their occurrences, added by therapists, and come back through occurrences.
    private static func operations(of kind: RecordKind) -> [String] {
        switch kind.editing {
        case .whole:
            let collection = capitalized(kind.collection)
            let single = capitalized(kind.rawValue)
            return [
                "listMy\(collection)", "createMy\(single)", "updateMy\(single)", "deleteMy\(single)",
                "listPatient\(collection)",
            ]
        case .thought:
            return ["listMyThoughts", "deleteMyThought", "listPatientThoughts", "createPatientThought"]
        case .thoughtOccurrence:
            return ["createMyThoughtOccurrence", "updateMyThoughtOccurrence", "deleteMyThoughtOccurrence"]
        }
    }

    @Test(
        "the access matrix has rows for the kind's operations, for the patient and the therapist",
        arguments: RecordKind.allCases)
    func accessRows(_ kind: RecordKind) {
        let operations = Set(APIRow.all.map(\.operation))
        for operation in Self.operations(of: kind) {
            #expect(operations.contains(operation), "\(operation)")
        }
    }

    @Test("every kind lives in the records table, which erasure and the person's copy cover")
    func erasure() {
        #expect(ErasureMap.personalTables.contains(EntryRecord.schema))
    }
}
