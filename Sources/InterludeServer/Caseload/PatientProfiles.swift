import Fluent
import Foundation
import InterludeCore
import Vapor

/// Creating the profile that goes with a patient account.
enum PatientProfiles {
    static func create(userID: UUID, shareWithResearch: Bool, on database: any Database) async throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10 {
            let pseudonym = Pseudonym.make(using: &generator)
            guard try await PatientProfileRecord.query(on: database).filter(\.$pseudonym == pseudonym).first() == nil
            else { continue }
            try await PatientProfileRecord(userID: userID, pseudonym: pseudonym, shareWithResearch: shareWithResearch)
                .create(on: database)
            return
        }
        throw Abort(.internalServerError, reason: "No free pseudonym found")
    }
}
