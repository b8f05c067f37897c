import Foundation

/// What a notification a native app showed by itself did for a prompt: the prompt's paradata from the device.
public enum DeviceNotificationEvent: String, Codable, Hashable, Sendable, CaseIterable {
    /// Handed to the operating system to show at its time.
    case planned
    /// Shown to the person.
    case delivered
    /// Tapped: the person opened the prompt from it.
    case opened

    /// Checks the time a device reports: not ahead of the server's clock by more than a phone's clock may run ahead,
    /// and for a delivered or opened notification not before the prompt could be shown at all.
    public static func check(_ event: Self, at: Date, opensAt: Date, now: Date, field: String) throws(ValidationFailure)
    {
        if at > now.addingTimeInterval(PromptTiming.clockTolerance) {
            throw ValidationFailure(field: field, code: .outOfRange)
        }
        if event != .planned, at < opensAt.addingTimeInterval(-PromptTiming.clockTolerance) {
            throw ValidationFailure(field: field, code: .outOfRange)
        }
    }
}
