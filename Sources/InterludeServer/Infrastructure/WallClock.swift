import Foundation

/// The source of "now" for everything time-dependent, so tests can stand at any instant.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
    }

    public var now: Date { read() }

    public static let system = WallClock { Date() }
}
