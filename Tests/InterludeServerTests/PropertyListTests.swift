import FluentKit
import Testing

@testable import InterludeServer

/// Every record lists its properties for Fluent by hand, which is much faster than reflection; the list must name
/// each property reflection finds, or a column would silently stay unread and unwritten.
@Suite("Property lists")
struct PropertyListTests {
    static let records: [any Fields] = [
        AccessTokenRecord(), AlertRecord(), AppointmentRecord(), AuditEventRecord(), CalendarFeedRecord(),
        ConsentRecord(), ConsentVersionRecord(), DeviceRecord(), EmailTokenRecord(), EnrollmentRecord(),
        EntryRecord(), ErasedIDRecord(), ErasureRecord(), ExportRecord(), ExportParticipantRecord(),
        TimeZoneChangeRecord(), HealthImportRecord(), InstrumentPinRecord(), InstrumentVersionRecord(),
        InterventionBackupRecord(), InterventionRecord(), InterventionTemplateRecord(), MessageChoiceRecord(),
        MessagePlanRecord(), NotificationPreferenceRecord(), NotificationRecord(), PairingCodeRecord(),
        PatientProfileRecord(), PlanAdjustmentRecord(), PlanRecord(), PromptRecord(), RateLimitEventRecord(),
        ResponseRecord(), RuleFiringRecord(), RuleRecord(), SampleRecord(), SampleChoiceRecord(),
        SelfExportRecord(), SessionRecord(), SettingRecord(), StudyMessageRecord(), StudyRecord(),
        StudyStaffRecord(), SyncMutationRecord(), SyncTombstoneRecord(), TherapistProfileRecord(), UserRecord(),
    ]

    @Test("each record's list names exactly the properties reflection finds", arguments: 0..<records.count)
    func complete(_ index: Int) {
        let record = Self.records[index]
        let reflected = Mirror(reflecting: record).children.compactMap { $0.value as? any AnyProperty }
        #expect(record.properties.count == reflected.count, "\(type(of: record))")
        #expect(
            Set(record.properties.map { ObjectIdentifier($0 as AnyObject) })
                == Set(reflected.map { ObjectIdentifier($0 as AnyObject) }),
            "\(type(of: record))")
    }
}
