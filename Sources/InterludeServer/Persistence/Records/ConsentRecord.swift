import Fluent
import Foundation
import InterludeCore

/// A person's decision on one version of a document: the privacy policy, a study's consent (with the modules
/// granted and declined), or sharing with research. A later decision replaces it; leaving a study revokes it.
final class ConsentRecord: Model, @unchecked Sendable {
    static let schema = "consents"

    enum Document: String {
        case privacyPolicy
        case studyConsent
        case researchSharing
    }

    /// How the decision was taken.
    enum Method: String, Codable {
        case registration
        case joining
        /// Answering a version put to the person after they joined.
        case reconsent
        /// Granting or declining an optional module later.
        case change
        /// The research-sharing switch in the profile.
        case profile
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
    /// When a later decision on the same document took this one's place.
    @OptionalField(key: "replaced_at") var replacedAt: Date?
    /// The modules granted and declined, as a JSON object; decisions from before modules existed have none.
    @OptionalField(key: "modules") var modules: String?
    @OptionalField(key: "method") var method: Method?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [$id, $user, $study, $document, $version, $grantedAt, $revokedAt, $replacedAt, $modules, $method]
    }

    init() {}

    init(
        userID: UUID, document: Document, studyID: UUID? = nil, version: String, grantedAt: Date, method: Method,
        choices: ConsentChoices? = nil
    ) throws {
        self.$user.id = userID
        self.document = document.rawValue
        self.$study.id = studyID
        self.version = version
        self.grantedAt = grantedAt
        self.method = method
        self.modules = try choices.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
    }

    var choices: ConsentChoices? {
        modules.flatMap { try? JSONDecoder().decode(ConsentChoices.self, from: Data($0.utf8)) }
    }
}
