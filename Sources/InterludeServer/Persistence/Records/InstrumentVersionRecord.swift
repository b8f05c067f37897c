import Fluent
import Foundation

/// One version of an instrument: a draft until published, then never changed again.
package final class InstrumentVersionRecord: Model, @unchecked Sendable {
    package static let schema = "instrument_versions"

    enum Status: String, Codable {
        case draft
        case published
    }

    enum Origin: String, Codable {
        case library
        case json
        case fhir
        case redcap
    }

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @OptionalParent(key: "created_by") var createdBy: UserRecord?
    /// The study or practice that imported the instrument; none for the shipped library and for instruments imported
    /// before instruments had owners.
    @OptionalParent(key: "owner_study_id") var ownerStudy: StudyRecord?

    // data
    @Field(key: "key") package var key: String
    @Field(key: "version") package var version: Int
    @Field(key: "title") var title: String
    @Field(key: "status") var status: Status
    @Field(key: "origin") var origin: Origin
    @Field(key: "definition") var definition: String
    @OptionalField(key: "published_at") var publishedAt: Date?
    /// Offered to every study; a new version then needs an administrator. Held alike by every version of a key.
    @Field(key: "shared") var shared: Bool

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $createdAt, $createdBy, $ownerStudy, $key, $version, $title, $status, $origin, $definition,
            $publishedAt, $shared,
        ]
    }

    package init() {}

    init(
        key: String, version: Int, title: String, origin: Origin, definition: String, createdBy: UUID?,
        ownerStudy: UUID? = nil,
        shared: Bool = false, now: Date
    ) {
        self.key = key
        self.version = version
        self.title = title
        self.status = .draft
        self.origin = origin
        self.definition = definition
        self.$createdBy.id = createdBy
        self.$ownerStudy.id = ownerStudy
        self.shared = shared
        self.createdAt = now
    }
}

extension InstrumentVersionRecord {
    /// Whether a study (or practice) may assign, plan or name the instrument in its rules: the shipped library, the
    /// installation's own and shared instruments everywhere; an unshared import only in the study that imported it.
    func isUsable(in studyID: UUID?) -> Bool {
        origin == .library || $ownerStudy.id == nil || shared || $ownerStudy.id == studyID
    }
}
