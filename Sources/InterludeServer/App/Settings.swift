import Foundation
import InterludeCore

/// Everything an operator can configure, read once at start from the environment.
public struct Settings: Sendable {
    /// How the server reaches its database.
    public enum Database: Sendable, Equatable {
        /// The embedded SQLite file in the data directory.
        case sqliteFile(String)
        /// A PostgreSQL server given by a `postgres://` URL; tables live in `schema` when one is named.
        case postgres(url: String, schema: String?)

        var isSQLite: Bool {
            if case .postgres = self { return false }
            return true
        }
    }

    /// What runs the SQLite file in the data directory.
    public enum SQLiteDriver: String, Sendable, Equatable, CaseIterable {
        /// The engine of InterludeSQLite: one writer commits concurrent writes together, statements stay prepared.
        case embedded
        /// Fluent's stock SQLite driver: a connection per core, each write a commit of its own.
        case fluent
    }

    /// How outgoing email leaves the server.
    public enum Mail: Sendable, Equatable {
        /// Written as `.eml` files into this folder.
        case outbox(String)
        /// Sent to this SMTP server.
        case smtp(SMTPServer)
    }

    public var dataDirectory: String
    public var database: Database
    public var publicURL: String
    public var hostname: String
    public var port: Int
    public var mail: Mail
    public var mailFrom: String
    public var adminEmail: String
    /// The bcrypt cost; lower only in tests.
    public var passwordCost: Int
    /// Seconds between planner runs inside `serve` (0: only `interlude worker` plans).
    public var plannerInterval: Int
    /// How many days ahead prompts are materialised.
    public var plannerHorizonDays: Int
    /// The key for patient free text at rest (base64, 32 bytes); without it one is kept in the data directory.
    public var dataKey: String?
    /// How many reverse proxies in front of the server append to `X-Forwarded-For` (0: the header is ignored).
    public var trustedProxies: Int
    /// How notifications leave the server.
    public var push: Push
    /// When set, `/metrics` answers only a request that sends it as a bearer token.
    public var metricsToken: String?
    /// Seconds between looks for exports to write inside `serve` (0: only `interlude worker` writes them).
    public var exportInterval: Int
    /// How many days a finished export stays for download.
    public var exportRetentionDays: Int
    /// How long the retention job keeps what has served its purpose.
    public var retention = Retention()
    /// With PostgreSQL: connections each process keeps per core (one event loop per core).
    public var databaseConnectionsPerCore = 4
    /// Which driver runs the SQLite file.
    public var sqliteDriver = SQLiteDriver.embedded
    /// Whether the API's fast paths answer in place of the generated code (see `FastPaths`).
    public var apiFastPaths = true
    /// Whether the console cookie is sent only over HTTPS.
    public var secureCookies: Bool { publicURL.lowercased().hasPrefix("https://") }

    public init(
        dataDirectory: String, database: Database, publicURL: String, hostname: String = "127.0.0.1",
        port: Int = 8080, mail: Mail, mailFrom: String, adminEmail: String = Settings.defaultAdminEmail,
        passwordCost: Int = 12, trustedProxies: Int = 0, dataKey: String? = nil, plannerInterval: Int = 60,
        plannerHorizonDays: Int = Settings.defaultPlannerHorizonDays, push: Push = Push(), metricsToken: String? = nil,
        exportInterval: Int = 5, exportRetentionDays: Int = Settings.defaultExportRetentionDays
    ) {
        self.dataDirectory = dataDirectory
        self.database = database
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.hostname = hostname
        self.port = port
        self.mail = mail
        self.mailFrom = mailFrom
        self.adminEmail = adminEmail
        self.passwordCost = passwordCost
        self.trustedProxies = trustedProxies
        self.dataKey = dataKey
        self.plannerInterval = plannerInterval
        self.plannerHorizonDays = plannerHorizonDays
        self.push = push
        self.metricsToken = metricsToken
        self.exportInterval = exportInterval
        self.exportRetentionDays = exportRetentionDays
    }

    /// How long data that has served its purpose is kept before the retention job deletes it.
    public struct Retention: Sendable, Equatable {
        /// Days after their expiry that sessions, email links and access tokens are kept.
        public var expiredDays = 7
        /// Days after sending (or giving up) that a notification keeps its title and text.
        public var notificationDays = 30
        /// Days an applied sync mutation's answer is kept for a repeated upload.
        public var syncDays = 90
        /// Days an outbox email file is kept.
        public var outboxDays = 30
        /// Years the audit log is kept.
        public var auditYears = 10

        public init() {}
    }

    /// Web Push, APNs and the dispatcher that sends through them.
    public struct Push: Sendable, Equatable {
        /// The VAPID signing key (the P-256 private scalar, base64url); without it one is kept in the data directory.
        public var vapidPrivateKey: String?
        /// Who the push services may contact about this server: a `mailto:` or `https:` address.
        public var subject: String?
        /// Lets subscriptions point at loopback addresses over plain HTTP, for tests with a local push endpoint.
        public var allowLoopback: Bool
        public var apns: APNs?
        /// Seconds between dispatcher runs inside `serve` (0: only `interlude worker` sends).
        public var dispatchInterval: Int

        public init(
            vapidPrivateKey: String? = nil, subject: String? = nil, allowLoopback: Bool = false, apns: APNs? = nil,
            dispatchInterval: Int = 10
        ) {
            self.vapidPrivateKey = vapidPrivateKey
            self.subject = subject
            self.allowLoopback = allowLoopback
            self.apns = apns
            self.dispatchInterval = dispatchInterval
        }
    }

    /// Token-based APNs: the .p8 key, its id, the team, the app's bundle id and the endpoint.
    public struct APNs: Sendable, Equatable {
        public var keyFile: String
        public var keyID: String
        public var teamID: String
        public var topic: String
        public var endpoint: String
        /// Extra certificates to trust for the endpoint (PEM), for a local test endpoint.
        public var caFile: String?

        public init(keyFile: String, keyID: String, teamID: String, topic: String, endpoint: String, caFile: String?) {
            self.keyFile = keyFile
            self.keyID = keyID
            self.teamID = teamID
            self.topic = topic
            self.endpoint = endpoint
            self.caFile = caFile
        }
    }

    public static let defaultAPNsEndpoint = "https://api.push.apple.com"

    public static let defaultAdminEmail = "admin@interlude.localhost"
    public static let defaultPlannerHorizonDays = 14
    public static let defaultExportRetentionDays = 7

    /// Whether `name` can be used unquoted as a PostgreSQL schema name.
    public static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter, name.count <= 63 else { return false }
        return name.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "_" }
    }

    /// Reads the settings from environment variables; a malformed one names itself in the error.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> Settings
    {
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        let dataDirectory = value("INTERLUDE_DATA_DIR") ?? "./data"
        let port: Int
        if let raw = value("PORT") {
            guard let parsed = Int(raw), (1...65535).contains(parsed) else {
                throw SettingsError.invalid(name: "PORT", value: raw, expected: "a port number from 1 to 65535")
            }
            port = parsed
        } else {
            port = 8080
        }
        let hostname = value("HOST") ?? "127.0.0.1"
        let database: Database
        if let url = value("DATABASE_URL") {
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw SettingsError.invalid(
                    name: "DATABASE_URL", value: "(hidden)", expected: "a postgres:// or postgresql:// URL")
            }
            let schema = value("DATABASE_SCHEMA")
            if let schema, !Self.isPlainIdentifier(schema) {
                throw SettingsError.invalid(
                    name: "DATABASE_SCHEMA", value: schema, expected: "lower-case letters, digits and underscores")
            }
            database = .postgres(url: url, schema: schema)
        } else {
            database = .sqliteFile(dataDirectory + "/interlude.sqlite")
        }
        let publicURL = value("PUBLIC_URL") ?? "http://localhost:\(port)"
        guard let parsedPublic = URL(string: publicURL), let scheme = parsedPublic.scheme,
            ["http", "https"].contains(scheme.lowercased()), parsedPublic.host != nil
        else {
            throw SettingsError.invalid(name: "PUBLIC_URL", value: publicURL, expected: "an http:// or https:// URL")
        }
        let mail: Mail
        if let smtpURL = value("SMTP_URL") {
            do {
                mail = .smtp(try SMTPServer(url: smtpURL, caFile: value("SMTP_CA_FILE")))
            } catch {
                throw SettingsError.invalid(name: "SMTP_URL", value: "(hidden)", expected: "\(error)")
            }
        } else {
            mail = .outbox(dataDirectory + "/outbox")
        }
        let mailFrom = value("MAIL_FROM") ?? "Interlude <noreply@\(parsedPublic.host ?? "localhost")>"
        let adminEmail = value("ADMIN_EMAIL") ?? defaultAdminEmail
        guard EmailAddress(adminEmail) != nil else {
            throw SettingsError.invalid(name: "ADMIN_EMAIL", value: adminEmail, expected: "an email address")
        }
        func integer(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws -> Int {
            guard let raw = value(name) else { return fallback }
            guard let parsed = Int(raw), range.contains(parsed) else {
                throw SettingsError.invalid(
                    name: name, value: raw, expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return parsed
        }
        let trustedProxies: Int
        switch value("TRUST_PROXY")?.lowercased() {
        case nil, "false", "no": trustedProxies = 0
        case "true", "yes": trustedProxies = 1
        default: trustedProxies = try integer("TRUST_PROXY", default: 0, in: 0...10)
        }
        let plannerInterval = try integer("PLANNER_INTERVAL", default: 60, in: 0...86_400)
        let plannerHorizonDays = try integer(
            "PLANNER_HORIZON_DAYS", default: Settings.defaultPlannerHorizonDays, in: 1...90)
        var push = Push(
            vapidPrivateKey: value("WEBPUSH_VAPID_PRIVATE_KEY"), subject: value("WEBPUSH_SUBJECT"),
            allowLoopback: ["1", "true", "yes"].contains(value("WEBPUSH_ALLOW_LOOPBACK")?.lowercased() ?? ""),
            dispatchInterval: try integer("DISPATCH_INTERVAL", default: 10, in: 0...3600))
        if let subject = push.subject, !(subject.hasPrefix("mailto:") || subject.hasPrefix("https://")) {
            throw SettingsError.invalid(
                name: "WEBPUSH_SUBJECT", value: subject, expected: "a mailto: or https:// address")
        }
        let apnsNames = ["APNS_KEY_FILE", "APNS_KEY_ID", "APNS_TEAM_ID", "APNS_TOPIC"]
        let apnsValues = apnsNames.map(value)
        if apnsValues.allSatisfy({ $0 != nil }) {
            if let endpoint = value("APNS_ENDPOINT"),
                !PushEndpointPolicy.accepts(endpoint, allowLoopback: push.allowLoopback)
                    || URL(string: endpoint).map({ $0.path.isEmpty || $0.path == "/" }) != true
            {
                throw SettingsError.invalid(
                    name: "APNS_ENDPOINT", value: endpoint,
                    expected: "an https:// origin on a public host, without a path")
            }
            push.apns = APNs(
                keyFile: apnsValues[0]!, keyID: apnsValues[1]!, teamID: apnsValues[2]!, topic: apnsValues[3]!,
                endpoint: value("APNS_ENDPOINT") ?? defaultAPNsEndpoint, caFile: value("APNS_CA_FILE"))
        } else if let missing = zip(apnsNames, apnsValues).first(where: { $0.1 == nil }),
            apnsValues.contains(where: { $0 != nil })
        {
            throw SettingsError.invalid(
                name: missing.0, value: "", expected: "a value, as the other APNS_ settings are set")
        }
        var retention = Retention()
        retention.expiredDays = try integer("RETENTION_EXPIRED_DAYS", default: retention.expiredDays, in: 0...3650)
        retention.notificationDays = try integer(
            "RETENTION_NOTIFICATION_DAYS", default: retention.notificationDays, in: 1...3650)
        retention.syncDays = try integer("RETENTION_SYNC_DAYS", default: retention.syncDays, in: 31...3650)
        retention.outboxDays = try integer("RETENTION_OUTBOX_DAYS", default: retention.outboxDays, in: 1...3650)
        retention.auditYears = try integer("RETENTION_AUDIT_YEARS", default: retention.auditYears, in: 1...100)
        var settings = Settings(
            dataDirectory: dataDirectory, database: database, publicURL: publicURL, hostname: hostname, port: port,
            mail: mail, mailFrom: mailFrom, adminEmail: adminEmail, trustedProxies: trustedProxies,
            dataKey: value("INTERLUDE_DATA_KEY"), plannerInterval: plannerInterval,
            plannerHorizonDays: plannerHorizonDays,
            push: push, metricsToken: value("METRICS_TOKEN"),
            exportInterval: try integer("EXPORT_INTERVAL", default: 5, in: 0...3600),
            exportRetentionDays: try integer("EXPORT_RETENTION_DAYS", default: defaultExportRetentionDays, in: 1...365))
        settings.retention = retention
        settings.databaseConnectionsPerCore = try integer("DATABASE_CONNECTIONS_PER_CORE", default: 4, in: 1...64)
        if let driver = value("SQLITE_DRIVER") {
            guard let chosen = SQLiteDriver(rawValue: driver.lowercased()) else {
                throw SettingsError.invalid(name: "SQLITE_DRIVER", value: driver, expected: "embedded or fluent")
            }
            settings.sqliteDriver = chosen
        }
        switch value("API_FAST_PATHS")?.lowercased() {
        case nil, "on": settings.apiFastPaths = true
        case "off": settings.apiFastPaths = false
        case let other?: throw SettingsError.invalid(name: "API_FAST_PATHS", value: other, expected: "on or off")
        }
        return settings
    }
}

public enum SettingsError: Error, CustomStringConvertible {
    case invalid(name: String, value: String, expected: String)

    public var description: String {
        switch self {
        case .invalid(let name, let value, let expected):
            return "Setting \(name)=\(value) is not valid: expected \(expected)."
        }
    }
}
