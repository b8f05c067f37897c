/// What a rule firing did, as its log shows it to staff: the kind of action, never the ids of what it made.
public enum FiringOutcome: String, Sendable, CaseIterable {
    case alert
    case intervention
    case prompt
    /// The rule matched but its action could not be carried out (nobody to alert, an unpublished instrument).
    case notCarriedOut

    /// Reads a stored outcome: the action's kind, then the id of what it made (`intervention 6f…`), or the kind
    /// and a colon when nothing was made (`alert: nobody to alert`).
    public init(stored: String) {
        let kind = stored.prefix { $0.isLetter }
        let made = stored.dropFirst(kind.count).first == " "
        self = made ? Self(rawValue: String(kind)) ?? .notCarriedOut : .notCarriedOut
    }
}
