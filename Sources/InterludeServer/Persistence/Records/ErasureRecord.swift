import Fluent
import Foundation
import InterludeCore

/// The tombstone an erased account leaves: that an account of a role was erased, and when; nothing about whom.
final class ErasureRecord: Model, @unchecked Sendable {
    static let schema = "erasures"

    // managed
    @ID(key: .id) var id: UUID?

    // data
    @Field(key: "role") var role: Role
    @Field(key: "erased_at") var erasedAt: Date

    init() {}

    init(id: UUID, role: Role, erasedAt: Date) {
        self.id = id
        self.role = role
        self.erasedAt = erasedAt
    }
}
