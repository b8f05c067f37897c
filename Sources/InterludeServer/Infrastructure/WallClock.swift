import Foundation

/// The source of "now" for everything time-dependent, and of waiting, so tests can stand at any instant and wait
/// without losing time.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date
    private let wait: @Sendable (TimeInterval) async -> Void

    public init(_ read: @escaping @Sendable () -> Date, sleep wait: @escaping @Sendable (TimeInterval) async -> Void) {
        self.read = read
        self.wait = wait
    }

    public var now: Date { read() }

    /// Waits `seconds` (at most a few seconds are ever asked for).
    public func sleep(_ seconds: TimeInterval) async {
        await wait(seconds)
    }

    public static let system = WallClock(
        { Date() },
        sleep: { seconds in
            try? await Task.sleep(for: .milliseconds(Int((seconds * 1000).rounded())))
        })
}
