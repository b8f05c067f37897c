import Foundation

/// The six core processes of Acceptance and Commitment Therapy, in the order they stand around the hexaflex
/// (clockwise from the top left), each opening a short page the patient app shows.
public enum ACTProcess: String, Sendable, CaseIterable, Codable {
    case presentMoment
    case values
    case committedAction
    case selfAsContext
    case defusion
    case acceptance

    /// The address segment of the process's page: `/app/act/present-moment`.
    public var slug: String {
        switch self {
        case .presentMoment: "present-moment"
        case .values: "values"
        case .committedAction: "committed-action"
        case .selfAsContext: "self-as-context"
        case .defusion: "defusion"
        case .acceptance: "acceptance"
        }
    }

    public init?(slug: String) {
        guard let process = Self.allCases.first(where: { $0.slug == slug }) else { return nil }
        self = process
    }
}
