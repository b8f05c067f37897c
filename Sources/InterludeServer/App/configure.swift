import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import InterludeSQLite
import Leaf
import OpenAPIRuntime
import Prometheus
import Vapor

/// Sets up the application in one readable order: settings → middleware → database → migrations → routes →
/// metrics. `clock` and `mailer` are injectable so tests can stand at any instant and read what was sent.
public func configure(
    _ app: Application, settings: Settings, clock: WallClock = .system, mailer: (any Mailer)? = nil
) async throws {
    // Settings and services
    try DataDirectory.prepare(settings.dataDirectory)
    let localizer = try Localizer.shipped(directory: app.directory.resourcesDirectory + "Locales")
    let metrics = PrometheusCollectorRegistry()
    app.interlude = AppServices(
        settings: settings,
        clock: clock,
        mailer: mailer ?? makeMailer(settings: settings, clock: clock, app: app),
        passwords: try PasswordHashing(cost: settings.passwordCost, threadPool: app.threadPool),
        localizer: localizer,
        serverSecret: ServerSecret(),
        metrics: metrics,
        cipher: try FieldCipher.load(base64Key: settings.dataKey, dataDirectory: settings.dataDirectory),
        library: try InstrumentCatalog.loadLibrary(directory: app.directory.resourcesDirectory + "Instruments"))
    app.notificationChannels = try await NotificationChannels.make(settings: settings)
    app.lifecycle.use(Application.NotificationChannelsShutdown())
    app.http.server.configuration.hostname = settings.hostname
    app.http.server.configuration.port = settings.port
    app.routes.defaultMaxBodySize = "1mb"
    // Batches of samples may come gzipped; unpacked they are held to the API's body limit.
    app.http.server.configuration.requestDecompression = .enabled(limit: .size(APIDoorMiddleware.limit))
    app.http.server.configuration.responseCompression = PublicFilesMiddleware.serverCompression

    // Middleware, outermost first
    let requests = RequestsInFlight()
    app.middleware = Middlewares()
    app.middleware.use(RequestsInFlight.Counting(requests: requests))
    app.middleware.use(RequestLogMiddleware())
    app.middleware.use(RequestMetricsMiddleware(registry: metrics))
    app.middleware.use(SecurityHeadersMiddleware(strictTransport: settings.secureCookies))
    app.middleware.use(APIResponseHeadersMiddleware())
    app.middleware.use(ProblemMiddleware())
    let assets = try PublicAssets.shipped(directory: app.directory.publicDirectory)
    app.publicAssets = assets
    app.middleware.use(PublicFilesMiddleware(directory: app.directory.publicDirectory, assets: assets))

    // Database
    let idleReaders = System.coreCount * settings.databaseConnectionsPerCore
    switch settings.database {
    case .sqliteFile(let path):
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        switch settings.sqliteDriver {
        case .embedded:
            // Under test every kept statement is checked against the one Fluent's SQLite driver writes.
            app.databases.use(
                .embeddedSQLite(
                    path: path, idleReaders: idleReaders, checkingKeptStatements: app.environment == .testing),
                as: .sqlite)
        case .fluent:
            // One connection per event loop: under a burst of writes requests queue for it longer than the
            // driver's default 10 seconds. They wait as long as the embedded engine waits for a lock.
            app.databases.use(.sqlite(.file(path), connectionPoolTimeout: .seconds(30)), as: .sqlite)
            // Readers beside the writer, as on the embedded engine.
            try await Statements.useWriteAheadLog(on: app.db)
        }
    case .postgres(let url, let schema):
        var configuration = try SQLPostgresConfiguration(url: url)
        if let schema {
            guard Settings.isPlainIdentifier(schema) else {
                throw SettingsError.invalid(name: "DATABASE_SCHEMA", value: schema, expected: "a plain identifier")
            }
            configuration.searchPath = [schema]
        }
        // Sized to the machine: a request waiting on a slow statement holds one connection, not its core's only one.
        app.databases.use(
            .postgres(configuration: configuration, maxConnectionsPerEventLoop: settings.databaseConnectionsPerCore),
            as: .psql)
        if let schema {
            try await Statements.createSchema(schema, on: app.db)
        }
    }
    // Handlers stop in the reverse order of their registration: this one, after the database's, stops the HTTP server
    // and waits for the requests in flight before the database closes.
    app.http.server.configuration.shutdownTimeout = .seconds(RequestsInFlight.patience.components.seconds)
    app.lifecycle.use(RequestsInFlight.Draining(requests: requests))

    // Migrations (applied by `serve` on start and by `migrate`)
    app.migrations.add(Migrations.all(cipher: app.interlude.cipher, clock: app.interlude.clock))
    app.databases.middleware.use(SyncStamps.Prompts(clock: clock))
    app.databases.middleware.use(SyncStamps.Appointments(clock: clock))

    // Views
    app.views.use(.leaf)
    app.leaf.cache.isEnabled = app.environment.isRelease

    // Routes
    try registerRoutes(app)
}

private func makeMailer(settings: Settings, clock: WallClock, app: Application) -> any Mailer {
    switch settings.mail {
    case .outbox(let directory):
        return OutboxMailer(directory: directory, from: settings.mailFrom, logger: app.logger, clock: clock)
    case .smtp(let server):
        let localName = URL(string: settings.publicURL)?.host ?? "localhost"
        return SMTPMailer(
            client: SMTPClient(server: server, group: app.eventLoopGroup, localName: localName),
            from: settings.mailFrom, clock: clock)
    }
}

private func registerRoutes(_ app: Application) throws {
    HealthRoutes().register(on: app)
    let api = app.grouped("api", "v1")
    api.get("openapi.yaml") { _ in try OpenAPISpec.response() }
    let routes = app.grouped(APIDoorMiddleware())
    let configuration = OpenAPIRuntime.Configuration(dateTranscoder: APIDateTranscoder(), jsonEncodingOptions: [])
    let serverURL = try Servers.Server1.url()
    let transport = APITransport(
        routes,
        replacing: app.interlude.settings.apiFastPaths ? try FastPaths.operations(configuration: configuration) : [],
        bounds: try RequestBounds.builtIn(), serverPath: serverURL.path)
    try APIHandler().registerHandlers(on: transport, serverURL: serverURL, configuration: configuration)
    try transport.checkAllReplaced()
    try WebRoutes().register(on: app)
}
