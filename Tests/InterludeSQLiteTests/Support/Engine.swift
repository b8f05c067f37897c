import FluentKit
import FluentSQLiteDriver
import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit

@testable import InterludeSQLite

/// A database file of its own, opened as an application opens it: by the embedded engine, and when asked by
/// Fluent's stock SQLite driver beside it on the same file.
struct Engine: Sendable {
    let path: String
    private let databases: Databases
    private let stock: Databases

    var database: any Database { Self.database(of: databases) }
    var sql: any SQLDatabase { database as! any SQLDatabase }
    /// The same file through Fluent's own SQLite driver.
    var stockDatabase: any Database { Self.database(of: stock) }

    private static func database(of databases: Databases) -> any Database {
        databases.database(logger: Logger(label: "engine-test"), on: MultiThreadedEventLoopGroup.singleton.any())!
    }

    /// Runs `body` against a fresh file and removes it afterwards.
    static func with(checking: Bool = true, _ body: (Engine) async throws -> Void) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID()).sqlite").path
        let databases = Databases(threadPool: .singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(.embeddedSQLite(path: path, idleReaders: 2, checkingKeptStatements: checking), as: .sqlite)
        let stock = Databases(threadPool: .singleton, on: MultiThreadedEventLoopGroup.singleton)
        stock.use(.sqlite(.file(path)), as: .sqlite)
        let engine = Engine(path: path, databases: databases, stock: stock)
        do {
            try await body(engine)
        } catch {
            await engine.close()
            throw error
        }
        await engine.close()
    }

    private func close() async {
        await stock.shutdownAsync()
        await databases.shutdownAsync()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A model of the kind an application keeps: an id, text, an optional number, a date, a parent.
final class Note: Model, @unchecked Sendable {
    static let schema = "notes"

    @ID(key: .id) var id: UUID?
    @Field(key: "text") var text: String
    @OptionalField(key: "score") var score: Int?
    @Field(key: "written_at") var writtenAt: Date
    @OptionalParent(key: "folder_id") var folder: Folder?

    init() {}

    init(text: String, score: Int?, writtenAt: Date, folder: UUID?) {
        self.text = text
        self.score = score
        self.writtenAt = writtenAt
        self.$folder.id = folder
    }
}

final class Folder: Model, @unchecked Sendable {
    static let schema = "folders"

    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String

    init() {}

    init(name: String) {
        self.name = name
    }
}

extension Engine {
    /// The two tables, made with Fluent's schema builder.
    func createTables() async throws {
        try await database.schema(Folder.schema).id().field("name", .string, .required).create()
        try await database.schema(Note.schema).id().field("text", .string, .required).field("score", .int)
            .field("written_at", .datetime, .required).field("folder_id", .uuid, .references(Folder.schema, .id))
            .create()
    }
}
