import Foundation
import Vapor

/// Serves the API contract the handlers are generated from, exactly as built in.
enum OpenAPISpec {
    static func response() throws -> Response {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw Abort(.notFound)
        }
        var headers = HTTPHeaders()
        headers.contentType = HTTPMediaType(type: "application", subType: "yaml", parameters: ["charset": "utf-8"])
        return Response(status: .ok, headers: headers, body: .init(data: try Data(contentsOf: url)))
    }
}
