import Foundation
import InterludeCore

#if canImport(Glibc)
    import Glibc
#endif

/// What `interlude doctor` finds: each check's verdict and what to do about it.
struct Finding: Sendable, Equatable {
    enum Level: String, Sendable {
        case ok
        case warn
        /// Must be fixed before people's data is trusted to this installation.
        case fix

        var label: String {
            switch self {
            case .ok: "ok  "
            case .warn: "warn"
            case .fix: "FIX "
            }
        }
    }

    var level: Level
    var subject: String
    var message: String

    var line: String { "  \(level.label)  \(subject): \(message)" }
}

/// The checks that need nothing but values, so each verdict can be tested on its own.
enum DoctorRules {
    /// The address people use: TLS unless it never leaves this machine; behind TLS, a trusted proxy.
    static func publicAddress(_ publicURL: String, trustedProxies: Int) -> [Finding] {
        let url = URLComponents(string: publicURL)
        let host = url?.host ?? ""
        if url?.scheme == "https" {
            var findings = [Finding(level: .ok, subject: "Public address", message: "\(publicURL), with TLS")]
            if trustedProxies == 0 {
                findings.append(
                    Finding(
                        level: .warn, subject: "Proxy",
                        message:
                            "TLS usually ends at a reverse proxy; set TRUST_PROXY=1 so rate limits see each client's address"
                    ))
            }
            return findings
        }
        if ["localhost", "127.0.0.1", "::1"].contains(host) {
            return [
                Finding(
                    level: .warn, subject: "Public address",
                    message:
                        "\(publicURL) only works on this machine; for others, serve it over TLS and set PUBLIC_URL to https://…"
                )
            ]
        }
        return [
            Finding(
                level: .fix, subject: "Public address",
                message:
                    "\(publicURL) sends people's data unencrypted; put TLS in front (docs/operations.md) and set PUBLIC_URL to https://…"
            )
        ]
    }

    /// A secret file (data key, push key) or the data folder: readable by the server's user alone.
    static func privateFile(_ subject: String, path: String, mode: Int?, folder: Bool = false) -> Finding {
        guard let mode else {
            return Finding(level: .fix, subject: subject, message: "\(path) is missing")
        }
        let octal = String(mode & 0o777, radix: 8)
        if mode & 0o077 != 0 {
            return Finding(
                level: .fix, subject: subject,
                message:
                    "\(path) can be read by other users (mode \(octal)); run chmod \(folder ? "700" : "600") \(path)")
        }
        return Finding(level: .ok, subject: subject, message: "\(path) (mode \(octal))")
    }

    /// Free space where the database lives.
    static func disk(available bytes: Int64, path: String) -> Finding {
        let gigabytes = Double(bytes) / 1_073_741_824
        let shown = "\((gigabytes * 10).rounded() / 10) GB free in \(path)"
        if gigabytes < 1 {
            return Finding(level: .fix, subject: "Disk", message: "\(shown); free space before answers are refused")
        }
        if gigabytes < 5 { return Finding(level: .warn, subject: "Disk", message: "\(shown); plan for more") }
        return Finding(level: .ok, subject: "Disk", message: shown)
    }

    /// How far this machine's clock is from the database server's; answers are checked against it.
    static func clock(offset seconds: TimeInterval) -> Finding {
        let shown = "\((abs(seconds) * 10).rounded() / 10) s from the database server's clock"
        if abs(seconds) > 60 {
            return Finding(level: .fix, subject: "Clock", message: "\(shown); synchronise both with NTP")
        }
        if abs(seconds) > 5 {
            return Finding(level: .warn, subject: "Clock", message: "\(shown); synchronise with NTP")
        }
        return Finding(level: .ok, subject: "Clock", message: shown)
    }

    static func migrations(pending: Int) -> Finding {
        pending == 0
            ? Finding(level: .ok, subject: "Database", message: "reachable, every migration applied")
            : Finding(
                level: .fix, subject: "Database",
                message: "\(pending) migrations pending; run `interlude migrate` (or start `serve`)")
    }
}

/// Reading the file system for the doctor.
enum DoctorFiles {
    static func mode(of path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }

    static func availableBytes(at path: String) -> Int64? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }
}
