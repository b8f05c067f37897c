import Foundation

/// How long the secrets Interlude hands out stay valid.
public enum AccountLifetimes {
    /// A bearer token for the API.
    public static let apiSession: TimeInterval = 30 * 24 * 3600
    /// A console sign-in, renewed by use.
    public static let consoleSession: TimeInterval = 12 * 3600
    /// An email verification link.
    public static let emailVerification: TimeInterval = 48 * 3600
    /// A password reset link.
    public static let passwordReset: TimeInterval = 3600
    /// A therapist's pairing code.
    public static let pairingCode: TimeInterval = 30 * 24 * 3600
    /// A therapist's invitation by email.
    public static let invitation: TimeInterval = 7 * 24 * 3600
}
