import Foundation

/// Where an export is: waiting for a worker, being written, ready for download, failed, or past its retention
/// (the file is gone, the log of it stays).
public enum ExportStatus: String, Codable, Sendable, CaseIterable {
    case queued
    case running
    case ready
    case failed
    case expired

    /// Still to be written: a worker may take it.
    public var isPending: Bool { self == .queued || self == .running }
}
