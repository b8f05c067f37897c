import Foundation
import Vapor

/// A FHIR resource as a file to download from the console: stable, readable JSON as `application/fhir+json`.
enum FHIRDownload {
    static func encode<Resource: Encodable>(_ resource: Resource) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(resource)
    }

    static func response<Resource: Encodable>(_ resource: Resource, filename: String) throws -> Response {
        var headers = HTTPHeaders()
        headers.contentType = HTTPMediaType(type: "application", subType: "fhir+json", parameters: ["charset": "utf-8"])
        headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"\(filename)\"")
        return Response(status: .ok, headers: headers, body: .init(data: try encode(resource)))
    }
}
