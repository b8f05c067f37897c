import Fluent
import Foundation
import InterludeCore

extension StudyService {
    /// Which records the study collects; anyone who may see the study may read it.
    func recordSettings(in grant: StudyGrant) throws -> RecordSettings {
        try grant.require(.viewStudy)
        return grant.study.recordSettings
    }

    /// Sets which records the study collects and the event types it adds; events of a type it no longer names
    /// keep their type. A research study that starts collecting a kind gets a consent version naming it, which its
    /// participants answer before more of their data belongs to it.
    func setRecordSettings(_ settings: RecordSettings, in grant: StudyGrant) async throws -> RecordSettings {
        try grant.require(.configureRecords)
        let study = grant.study
        let services = self.services
        let version = try await database.atomically { database in
            study.recordSettings = settings
            study.updatedAt = services.clock.now
            try await study.save(on: database)
            return try await ConsentService(database: database, services: services).coverCollection(in: grant)
        }
        try await grant.record(.studyChanged, target: "record-settings")
        if let version { try await grant.record(.consentVersionCreated, target: version.version) }
        return study.recordSettings
    }
}
