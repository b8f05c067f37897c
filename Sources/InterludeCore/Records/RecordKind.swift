import Foundation

/// The kinds of record a patient keeps besides questionnaires. Every place that handles records (storage, sync,
/// erasure, the person's copy, research exports, the access rules) works from this one list.
public enum RecordKind: String, Sendable, Codable, CaseIterable {
    case event
    case therapy
    case audiogram
    case mood

    /// The path segment under `/me` and `/patients/{id}`: `/me/events`.
    public var collection: String {
        switch self {
        case .event: "events"
        case .therapy: "therapies"
        case .audiogram: "audiograms"
        case .mood: "moods"
        }
    }

    /// The name of the kind's file in a research export: `events.csv`, `mood.csv`.
    public var exportFile: String { self == .mood ? "mood" : collection }

    public init?(collection: String) {
        guard let kind = Self.allCases.first(where: { $0.collection == collection }) else { return nil }
        self = kind
    }
}
