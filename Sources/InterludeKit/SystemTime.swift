import Foundation

/// The SDK's one reading of the system clock: the default wherever a piece takes a clock, so tests and simulations
/// can give their own.
public enum SystemTime {
    @Sendable public static func now() -> Date { Date() }
}
