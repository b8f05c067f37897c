import Fluent

/// The schema's history, in the order it happened. Never edit a migration once it has landed; add one.
enum Migrations {
    static func all(cipher: FieldCipher, clock: WallClock) -> [any Migration] {
        [
            CreateUsers(),
            CreatePatientProfiles(),
            CreateTherapistProfiles(),
            CreateSessions(),
            CreateEmailTokens(),
            CreateRateLimitEvents(),
            CreateStudies(),
            CreateStudyStaff(),
            CreateEnrollments(),
            CreatePairingCodes(),
            CreateConsents(),
            CreateAuditEvents(),
            CreateErasures(),
            CreateSettings(),
            CreateInstrumentVersions(),
            CreatePrompts(),
            CreateResponses(),
            CreatePlans(),
            CreatePlanAdjustments(),
            CreateAppointments(),
            CreateCalendarFeeds(),
            UpdatePromptsAddOccurrenceIndex(),
            UpdateStudiesAddArms(),
            CreateNotifications(),
            CreateSync(),
            CreateInterventions(),
            UpdateResponsesAddStudy(),
            UpdateResponsesUniquePrompt(),
            UpdateEnrollmentsUniqueCurrent(),
            UpdateInstrumentVersionsAddOwner(),
            UpdateUsersNormaliseEmails(),
            UpdateSealHealthData(cipher: cipher),
            UpdateUsersAddTwoFactor(),
            CreateInstrumentPins(clock: clock),
            CreateExports(),
            CreateAccessTokens(),
            UpdateStudiesAddDemographics(),
            CreateErasedIDs(),
            CreateConsentVersions(),
            UpdateResponsesAddContext(),
        ]
    }
}
