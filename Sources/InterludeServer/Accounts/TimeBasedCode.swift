import Crypto
import Foundation
import InterludeCore

/// Time-based one-time passwords as RFC 6238 defines them (HOTP of RFC 4226 over 30-second steps), the codes an
/// authenticator app shows. SHA-1 is what the apps use; SHA-256 and SHA-512 are there for the standard's vectors.
struct TimeBasedCode: Sendable {
    enum Algorithm: String, Sendable {
        case sha1 = "SHA1"
        case sha256 = "SHA256"
        case sha512 = "SHA512"
    }

    static let stepSeconds: TimeInterval = 30
    /// How many steps before and after the current one a code is still taken, for clocks that drift.
    static let tolerance = 1

    var secret: [UInt8]
    var digits = 6
    var algorithm = Algorithm.sha1

    /// The 30-second step `date` lies in.
    static func step(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / stepSeconds).rounded(.down))
    }

    /// The code for one step, with leading zeros.
    func code(step: Int64) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8] =
            switch algorithm {
            case .sha1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
            case .sha256: Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
            case .sha512: Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
            }
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let text = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// The step a typed code belongs to, looking `tolerance` steps around `date`; nil when it matches none. Spaces
    /// a person types between the digit groups are ignored.
    func matchingStep(_ typed: String, at date: Date) -> Int64? {
        let digitsOnly = typed.filter { $0 != " " }
        guard digitsOnly.count == digits, digitsOnly.allSatisfy(\.isASCII), digitsOnly.allSatisfy(\.isNumber) else {
            return nil
        }
        let current = Self.step(at: date)
        return (-Self.tolerance...Self.tolerance).map { current + Int64($0) }.first { code(step: $0) == digitsOnly }
    }

    /// The `otpauth://` address an authenticator app reads (typed in or from a QR code).
    func provisioningURI(account: String, issuer: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        let label = "\(issuer):\(account)".addingPercentEncoding(withAllowedCharacters: allowed) ?? account
        let issuerParameter = issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret, padded: false))&issuer=\(issuerParameter)"
            + "&algorithm=\(algorithm.rawValue)&digits=\(digits)&period=\(Int(Self.stepSeconds))"
    }
}
