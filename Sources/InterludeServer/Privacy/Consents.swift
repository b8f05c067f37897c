import Fluent
import Foundation
import InterludeCore
import Vapor

/// Keeping the consent history in step with a person's choices.
enum Consents {
    static func recordResearchSharing(_ share: Bool, userID: UUID, now: Date, on database: any Database) async throws {
        if share {
            let version = try await SiteTexts(database: database).privacyPolicyVersion()
            try await ConsentRecord(
                userID: userID, document: .researchSharing, version: version, grantedAt: now, method: .profile
            ).create(on: database)
        } else {
            try await ConsentRecord.query(on: database)
                .filter(\.$user.$id == userID)
                .filter(\.$document == ConsentRecord.Document.researchSharing.rawValue)
                .filter(\.$revokedAt == nil)
                .set(\.$revokedAt, to: now)
                .update()
        }
    }
}
