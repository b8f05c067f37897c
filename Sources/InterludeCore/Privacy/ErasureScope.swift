/// What an erasure removed: a whole account, or what one person gave in one study.
public enum ErasureScope: String, Codable, Sendable, CaseIterable {
    case account
    case studyData
}
