import Foundation

/// Where a prompt stands for the participant.
public enum PromptStatus: String, Codable, Sendable, CaseIterable {
    /// Not open yet.
    case scheduled
    case open
    case completed
    /// Closed without an answer.
    case expired
    /// Withdrawn before it was answered.
    case cancelled
    /// Its questionnaire was deactivated while it waited: still shown, but it cannot be filled.
    case inactive

    /// The status at `now`: completion, cancellation and deactivation are recorded; the rest follows from the
    /// window.
    public static func at(
        _ now: Date, recorded: PromptStatus, opensAt: Date, closesAt: Date
    ) -> PromptStatus {
        switch recorded {
        case .completed, .cancelled, .inactive: return recorded
        case .scheduled, .open, .expired:
            if now < opensAt { return .scheduled }
            return now < closesAt ? .open : .expired
        }
    }
}

/// What created a prompt.
public enum PromptSource: String, Codable, Sendable, CaseIterable {
    /// A therapist or researcher assigned it by hand.
    case manual
    /// A schedule materialised it.
    case schedule
    /// A rule opened it after an answer.
    case rule
    /// The participant asked for it.
    case onDemand
    /// A micro-randomised decision point delivered it.
    case decisionPoint
}

/// The rules for the times of a prompt and of the response to it.
public enum PromptTiming {
    /// The longest a prompt may stay open.
    public static let longestWindow: TimeInterval = 366 * 24 * 3600
    /// How far ahead a prompt may be assigned.
    public static let furthestStart: TimeInterval = 2 * 366 * 24 * 3600
    /// How much a phone's clock may run ahead of the server's.
    public static let clockTolerance: TimeInterval = 5 * 60

    /// Checks a window a person assigns: it must close after it opens, in the future, and not absurdly far out.
    public static func checkWindow(opensAt: Date, closesAt: Date, now: Date) throws(ValidationFailure) {
        var validator = FieldValidator()
        if closesAt <= opensAt {
            validator.add("closesAt", .invalidValue)
        } else if closesAt <= now {
            validator.add("closesAt", .expired)
        } else if closesAt.timeIntervalSince(opensAt) > longestWindow {
            validator.add("closesAt", .outOfRange)
        }
        if opensAt.timeIntervalSince(now) > furthestStart { validator.add("opensAt", .outOfRange) }
        try validator.check()
    }

    /// Checks when a response says it was made. Completed inside the window it counts even if it arrives later
    /// (a phone that was offline); completed after the window closed it is refused.
    public static func checkSubmission(
        startedAt: Date?, completedAt: Date, opensAt: Date, closesAt: Date, now: Date
    ) throws(ValidationFailure) {
        var validator = FieldValidator()
        if completedAt > now.addingTimeInterval(clockTolerance) {
            validator.add("completedAt", .invalidValue)
        } else if completedAt > closesAt {
            validator.add("completedAt", .afterDeadline)
        } else if completedAt < opensAt.addingTimeInterval(-clockTolerance) {
            validator.add("completedAt", .outOfRange)
        }
        if let startedAt, startedAt > completedAt { validator.add("startedAt", .invalidValue) }
        try validator.check()
    }
}
