import Foundation
import InterludeCore
import Vapor

/// Refuses a request that carries a control character anywhere a person types text: in a query parameter, a JSON
/// body or a form. Newline, carriage return and tab pass here, as running texts take them; one-line fields refuse
/// them in their own checks. The answer is a 422 naming the field, before any handler changes anything.
struct TextDoorMiddleware: AsyncMiddleware {
    /// The largest body the door reads; larger ones are refused as the route itself would refuse them.
    var limit: Int

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let reads =
            request.method != .GET && request.method != .HEAD && !APIDoorMiddleware.streamsBody(request)
            && Self.mediaType(in: request.headers) != nil
        let body = reads ? try await request.body.collect(max: limit).get() : nil
        if let field = Self.controlCharacterField(in: request, body: body) {
            throw ValidationFailure(field: field, code: .controlCharacter)
        }
        return try await next.respond(to: request)
    }

    /// The first field of the request's query or `body` that holds a control character, if any.
    static func controlCharacterField(in request: Request, body: ByteBuffer?) -> String? {
        if let query = request.url.query, let field = formField(query, named: "query") { return field }
        guard let body, body.readableBytes > 0, let media = mediaType(in: request.headers) else { return nil }
        let data = Data(body.readableBytesView)
        // A wildcard is read as JSON too: the operations take JSON for it.
        if media.subType == "json" || media.subType.hasSuffix("+json") || media.subType == "*" {
            return JSONTextScan.controlCharacterPath(in: data)
        }
        if media.type == "application" && media.subType == "x-www-form-urlencoded" {
            return formField(String(decoding: data, as: UTF8.self), named: "form")
        }
        return nil
    }

    /// The type and subtype a request's `Content-Type` names, lowercased: `application/json; charset=utf-8` is
    /// `("application", "json")`. Read by hand, as the door asks on every request: Vapor's `contentType` parses
    /// every directive of the header, which cost more than scanning the body.
    static func mediaType(in headers: HTTPHeaders) -> (type: String, subType: String)? {
        guard let value = headers.first(name: .contentType) else { return nil }
        let parts = value.prefix { $0 != ";" && $0 != "," }.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let type = trimmed(parts[0])
        let subType = trimmed(parts[1])
        guard !type.isEmpty, !subType.isEmpty else { return nil }
        return (type.lowercased(), subType.lowercased())
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) })
        else {
            return ""
        }
        return text[first...last]
    }

    /// The name of the first `name=value` pair of a query or form whose value holds a control character; `whole`
    /// when it is the name itself that holds one.
    private static func formField(_ encoded: String, named whole: String) -> String? {
        for pair in encoded.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            let name = decode(parts[0])
            let value = parts.count > 1 ? decode(parts[1]) : ""
            if name.hasControlCharacters(allowing: .multiple) || value.hasControlCharacters(allowing: .multiple) {
                return name.hasControlCharacters(allowing: .multiple) ? whole : name
            }
        }
        return nil
    }
}
