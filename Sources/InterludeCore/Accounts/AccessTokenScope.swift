import Foundation

/// What a personal access token may do: `exports:read` starts, follows and downloads exports of its studies, and
/// nothing else.
public enum AccessTokenScope: String, Codable, Sendable, CaseIterable {
    case exportsRead = "exports:read"
}

/// The rules of personal access tokens.
public enum AccessTokenRules {
    /// Every token starts with this, so a leaked one is recognised (and told apart from a session token).
    public static let prefix = "ilpat_"
    public static let nameMaxLength = 100
    public static let maxStudies = 50
    public static let lifetimeDays = 1...365
}
