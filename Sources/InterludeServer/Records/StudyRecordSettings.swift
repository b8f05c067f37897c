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
    /// keep their type.
    func setRecordSettings(_ settings: RecordSettings, in grant: StudyGrant) async throws -> RecordSettings {
        try grant.require(.configureRecords)
        let study = grant.study
        study.recordSettings = settings
        study.updatedAt = services.clock.now
        try await study.save(on: database)
        try await grant.record(.studyChanged, target: "record-settings")
        return study.recordSettings
    }
}
