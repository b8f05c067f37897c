import InterludeServer
import NIOCore
import NIOPosix
import Vapor

// Async code runs on the event loops, so a database query or a response no longer crosses between two thread pools.
NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment) { level in
    let console = Terminal()
    return { label in SafeLogHandler(wrapping: ConsoleLogger(label: label, console: console, level: level)) }
}
let app = try await Application.make(environment)
do {
    let settings = try Settings.fromEnvironment()
    try await configure(app, settings: settings)
    registerCommands(app)
    let command = environment.arguments.dropFirst().first
    if command == nil || command == "serve" || command?.hasPrefix("-") == true {
        try await prepareToServe(app)
    }
    try await app.execute()
} catch {
    app.logger.critical("\(String(describing: error))")
    try? await app.asyncShutdown()
    exit(1)
}
try await app.asyncShutdown()
