import Foundation

/// Whether a study is a therapist's practice (patients join with the therapist's pairing code) or a research study.
public enum StudyKind: String, Sendable, Codable, CaseIterable {
    case practice
    case research

    public init(joinMode: JoinMode) {
        self = joinMode == .pairingCode ? .practice : .research
    }
}

/// What a person is to one study when deciding what they may do with it: a member of its staff in one of the
/// study roles, or an administrator of the installation, who is a member of no study.
public enum StudyStanding: String, Sendable, CaseIterable {
    case owner
    case researcher
    case therapist
    case dataManager
    case admin

    public init(_ role: StudyRole) {
        switch role {
        case .owner: self = .owner
        case .researcher: self = .researcher
        case .therapist: self = .therapist
        case .dataManager: self = .dataManager
        }
    }
}

/// Everything a staff member may be allowed to do with a study and its participants.
public enum StudyPermission: String, Sendable, CaseIterable {
    /// See the study: its title, settings and consent.
    case viewStudy
    /// Change its settings.
    case editStudy
    /// List its participants and join requests under their pseudonyms.
    case viewParticipants
    /// Approve or decline join requests.
    case decideEnrollment
    case viewRules
    case editRules
    /// Try a rule against a participant's past answers: a read of the participant's data.
    case dryRunRules
    /// Read the log of rule firings, with their reasons.
    case viewFirings
    case viewPlans
    case editPlans
    /// See the intervention templates, the message pool and the message plan.
    case viewLibrary
    case editLibrary
    /// Read participants' answers, prompts, schedules and interventions in this study.
    case readParticipantData
    /// Receive the alerts its rules raise, and acknowledge them.
    case receiveAlerts
    /// Assign a participant a questionnaire, add an appointment.
    case actForParticipant
    /// Send a participant an intervention (in a study, only to participants of arms that receive interventions).
    case sendInterventions
    /// Import instruments into the study, share them, and move the study to a newer version.
    case manageInstruments
    /// See who is on the study's team, and in which role.
    case viewTeam
    /// Add staff to the team, change their roles and remove them.
    case manageTeam
    /// Export the pseudonymised data of participants who share with research.
    case exportData
    /// Choose which health records it collects and the event types it adds.
    case configureRecords
    /// Divide its participants into arms and choose how they are allocated (in a practice, its own comparison).
    case designArms
}

/// The one table of who may do what with a study: standing × permission × kind of study. Everything the server
/// decides about access to a study reads it; the access matrix test checks every route against it.
public enum StudyAccessPolicy {
    public static func allows(_ standing: StudyStanding, _ permission: StudyPermission, in kind: StudyKind) -> Bool {
        table[kind]?[standing]?.contains(permission) ?? false
    }

    /// Whether a member who may read participants' data sees one participant's: in a practice and as a research
    /// study's therapist always (the caller has made sure it is their own patient), otherwise only when the
    /// participant shares with research.
    public static func seesData(of participantSharing: Bool, as standing: StudyStanding, in kind: StudyKind) -> Bool {
        kind == .practice || standing == .therapist || participantSharing
    }

    /// The permissions of a standing in a kind of study.
    public static func permissions(of standing: StudyStanding, in kind: StudyKind) -> Set<StudyPermission> {
        table[kind]?[standing] ?? []
    }

    private static let researchTeam: Set<StudyPermission> = [
        .viewStudy, .viewParticipants, .decideEnrollment, .viewRules, .editRules, .dryRunRules, .viewFirings,
        .viewPlans, .editPlans, .viewLibrary, .editLibrary, .readParticipantData, .receiveAlerts, .manageInstruments,
        .viewTeam, .exportData,
    ]

    private static let table: [StudyKind: [StudyStanding: Set<StudyPermission>]] = [
        // A practice is its therapist's alone: the owner does everything there, nobody else anything. Its settings
        // are not edited as a study's are, nobody asks to join it, it has no team and nothing of it is exported.
        .practice: [
            .owner: Set(StudyPermission.allCases).subtracting([
                .editStudy, .decideEnrollment, .viewTeam, .manageTeam, .exportData,
            ])
        ],
        // A research study: its owner and researchers run it, read and export the pseudonymised data of
        // participants who share with research; the owner also chooses the team. A therapist on its staff follows
        // their own patients in it, plans for it and sends them interventions; a data manager exports and nothing more; an administrator
        // manages it and its team but reads no participant's data.
        .research: [
            .owner: researchTeam.union([.editStudy, .manageTeam, .configureRecords, .designArms]),
            .researcher: researchTeam,
            .therapist: [
                .viewStudy, .viewParticipants, .viewRules, .viewPlans, .editPlans, .viewLibrary, .readParticipantData,
                .sendInterventions, .viewTeam,
            ],
            .dataManager: [.viewStudy, .viewTeam, .exportData],
            .admin: [
                .viewStudy, .editStudy, .viewParticipants, .decideEnrollment, .viewRules, .editRules, .viewPlans,
                .editPlans,
                .viewLibrary, .editLibrary, .manageInstruments, .viewTeam, .manageTeam, .configureRecords, .designArms,
            ],
        ],
    ]
}
