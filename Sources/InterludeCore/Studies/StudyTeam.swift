/// Who may hold which role on a research study's team.
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
}
