import Testing

@testable import InterludeCore

@Suite("Who sees a participant's data")
struct StudyAccessPolicyTests {
    @Test(
        "in a practice and as a study's therapist always; for research staff only when the participant shares",
        arguments: [
            (StudyKind.practice, StudyStanding.owner, false, true),
            (.research, .therapist, false, true),
            (.research, .owner, true, true),
            (.research, .owner, false, false),
            (.research, .researcher, false, false),
            (.research, .researcher, true, true),
        ])
    func seesData(_ kind: StudyKind, standing: StudyStanding, sharing: Bool, sees: Bool) {
        // act / verify
        #expect(StudyAccessPolicy.seesData(of: sharing, as: standing, in: kind) == sees)
    }

    @Test("a data manager exports and sees the team and the study, nothing of its participants")
    func dataManager() {
        // act
        let permissions = StudyAccessPolicy.permissions(of: .dataManager, in: .research)

        // verify
        #expect(permissions == [.viewStudy, .viewTeam, .exportData])
        #expect(StudyAccessPolicy.permissions(of: .dataManager, in: .practice).isEmpty)
    }
}
