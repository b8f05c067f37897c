/// How long reading one upload may take, checked as the reading goes: an input that would take longer is refused
/// instead of holding a thread. Inputs are read in one pass, so a budget is only reached by a file far larger or
/// more intricate than any a person writes.
public struct WorkBudget: Sendable {
    /// Thrown when the budget is spent.
    public struct Exceeded: Error, Equatable, Sendable {}

    private let deadline: ContinuousClock.Instant?

    public init(_ duration: Duration) {
        deadline = ContinuousClock.now.advanced(by: duration)
    }

    private init() {
        deadline = nil
    }

    /// No limit: for the shipped library and the command line.
    public static let unlimited = WorkBudget()

    public func check() throws(Exceeded) {
        if let deadline, ContinuousClock.now > deadline { throw Exceeded() }
    }
}
