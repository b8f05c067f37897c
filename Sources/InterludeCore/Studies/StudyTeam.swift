/// Who may hold which role on a research study's team, and the rule that keeps a study run: it always has an owner.
public enum StudyTeam {
    /// The study roles an account of `role` may hold: a therapist follows their own patients as the study's
    /// therapist; a researcher owns, runs or exports. Administrators stand over every study already, and patients
    /// are never staff.
    public static func roles(for role: Role) -> Set<StudyRole> {
        switch role {
        case .therapist: [.therapist]
        case .researcher: [.owner, .researcher, .dataManager]
        case .admin, .patient: []
        }
    }

    /// Whether a team with these roles, after a change, still has someone to own the study.
    public static func hasOwner(_ roles: some Sequence<StudyRole>) -> Bool {
        roles.contains(.owner)
    }
}
