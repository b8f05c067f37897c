import Foundation
import Testing

/// Reads the sources for ways around `Access/`: the audit log written elsewhere, or a handler or controller that
/// queries the records of patient data itself.
@Suite("Sources: one door for patient data")
struct AccessDoorTests {
    /// Records that hold a patient's data or their identity; only services and `Access/` query them.
    static let patientRecords = [
        "ResponseRecord", "PromptRecord", "AlertRecord", "RuleFiringRecord", "InterventionRecord", "AppointmentRecord",
        "NotificationRecord", "PatientProfileRecord", "EnrollmentRecord", "PlanAdjustmentRecord", "DeviceRecord",
        "InterventionBackupRecord", "CalendarFeedRecord", "ConsentRecord",
    ]

    @Test("the audit log is written in Access/ only")
    func auditLogOnlyInAccess() throws {
        // setup
        let files = try SourceSafetyTests.swiftFiles()
        // act
        let writers = files.filter { $0.text.contains("AuditLog(") }.map(\.path)
        // verify
        #expect(!writers.isEmpty)
        #expect(writers.filter { !$0.hasPrefix("InterludeServer/Access/") } == [])
    }

    @Test("API handlers and console controllers read no patient record themselves")
    func handlersReadThroughServices() throws {
        let files = try SourceSafetyTests.swiftFiles().filter {
            $0.path.contains("/API/") || $0.path.contains("/Console/")
        }
        #expect(files.count > 20)
        for (path, text) in files {
            for record in Self.patientRecords {
                #expect(!text.contains("\(record).query"), "\(path) queries \(record)")
                #expect(!text.contains("\(record).find"), "\(path) finds a \(record)")
            }
        }
    }
}
