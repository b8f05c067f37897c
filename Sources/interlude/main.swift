import Foundation
import InterludeBenchmarks
import InterludeCore
import InterludeServer
import NIOCore
import NIOPosix
import Vapor

if CommandLine.arguments.dropFirst().first == "--version" {
    print("interlude \(InterludeVersion.current)")
    exit(0)
}
// Texts, instruments and the apps' files lie beside the executable, in the package folder above its build folder,
// or where INTERLUDE_RESOURCES says; the server starts from any working directory.
let resources: String
switch ResourceLocation.find(
    override: ProcessInfo.processInfo.environment["INTERLUDE_RESOURCES"],
    executable: Bundle.main.executableURL?.resolvingSymlinksInPath().path,
    workingDirectory: FileManager.default.currentDirectoryPath,
    isDirectory: { path in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    })
{
case .success(let folder): resources = folder
case .failure(let missing):
    FileHandle.standardError.write(Data("error: \(missing)\n".utf8))
    exit(1)
}

// Async code runs on the event loops, so a database query or a response no longer crosses between two thread pools.
NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
// `serve --demo` (or `--demo` alone) fills an empty installation with a demonstration; Vapor's serve never sees it.
let demo = CommandLine.arguments.dropFirst().contains("--demo")
var environment = try Environment.detect(arguments: CommandLine.arguments.filter { $0 != "--demo" })
try LoggingSystem.bootstrap(from: &environment) { level in
    let console = Terminal()
    return { label in SafeLogHandler(wrapping: ConsoleLogger(label: label, console: console, level: level)) }
}
let app = try await Application.make(environment)
app.directory = DirectoryConfiguration(workingDirectory: resources)
do {
    let settings = try Settings.fromEnvironment()
    try await configure(app, settings: settings)
    registerCommands(app)
    app.asyncCommands.use(BenchmarkCommand(), as: "benchmark")
    let command = environment.arguments.dropFirst().first
    if command == nil || command == "serve" || command?.hasPrefix("-") == true {
        try await prepareToServe(app, demo: demo)
    }
} catch {
    app.logger.critical("\(String(describing: error))")
    try? await app.asyncShutdown()
    exit(1)
}
do {
    try await app.execute()
} catch {
    // The command's failure is in the log already: Vapor reports what a command throws before passing it on.
    try? await app.asyncShutdown()
    exit(1)
}
try await app.asyncShutdown()
