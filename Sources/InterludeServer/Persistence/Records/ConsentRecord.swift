import Fluent
import Foundation

/// A person's agreement to one version of a document: the privacy policy or a study's consent.
final class ConsentRecord: Model, @unchecked Sendable {
    static let schema = "consents"

    enum Document: String {
        case privacyPolicy
        case studyConsent
        case researchSharing
    }

    // managed
    @ID(key: .id) var id: UUID?

    // references
    @Parent(key: "user_id") var user: UserRecord
    @OptionalParent(key: "study_id") var study: StudyRecord?

    // data
    @Field(key: "document") var document: String
    @Field(key: "version") var version: String
    @Field(key: "granted_at") var grantedAt: Date
    @OptionalField(key: "revoked_at") var revokedAt: Date?

    init() {}

    init(userID: UUID, document: Document, studyID: UUID? = nil, version: String, grantedAt: Date) {
        self.$user.id = userID
        self.document = document.rawValue
        self.$study.id = studyID
        self.version = version
        self.grantedAt = grantedAt
    }
}
