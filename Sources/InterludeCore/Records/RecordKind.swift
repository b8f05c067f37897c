import Foundation

/// The kinds of record a patient keeps besides questionnaires. Every place that handles records (storage, sync,
/// erasure, the person's copy, research exports, the access rules) works from this one list.
public enum RecordKind: String, Sendable, Codable, CaseIterable {
    case event
    case therapy
    case audiogram
    case mood
    case thought
    case thoughtOccurrence

    /// What a person keeps day by day, which a study's consent may keep from their therapist ("your therapist may
    /// read your diary"): moods, thoughts with their occurrences, events. Therapies and audiograms are the clinical
    /// record.
    public static let diary: Set<RecordKind> = [.mood, .thought, .event]

    /// The path segment under `/me` and `/patients/{id}`: `/me/events`.
    public var collection: String {
        switch self {
        case .event: "events"
        case .therapy: "therapies"
        case .audiogram: "audiograms"
        case .mood: "moods"
        case .thought: "thoughts"
        case .thoughtOccurrence: "thought-occurrences"
        }
    }

    /// The name of the kind's file in a research export: `events.csv`, `mood.csv`, `occurrences.csv`.
    public var exportFile: String {
        switch self {
        case .mood: "mood"
        case .thoughtOccurrence: "occurrences"
        default: collection
        }
    }

    /// The kind a study chooses to collect this one with: a thought's occurrences come with thoughts.
    public var collectedWith: RecordKind { self == .thoughtOccurrence ? .thought : self }

    /// The kinds a study chooses among.
    public static var collectable: [RecordKind] { allCases.filter { $0.collectedWith == $0 } }

    public init?(collection: String) {
        guard let kind = Self.allCases.first(where: { $0.collection == collection }) else { return nil }
        self = kind
    }
}
