import Foundation
import InterludeCore
import Vapor
import Yams

/// The limits `openapi.yaml` sets on what a request carries — the least and greatest value of every number, the
/// longest text, the longest list — checked in front of every operation. The generated decoders read types only: a
/// count of 2^62 where the contract says at most 48 would otherwise reach the domain's arithmetic. A value outside
/// its limits is refused with a 422 naming the field (`adjustment.days.monday.0.count`, or the parameter's name)
/// before any handler runs.
struct RequestBounds: Sendable {
    /// What the door checks of one schema.
    indirect enum Limits: Sendable {
        case number(integer: Bool, minimum: Double?, maximum: Double?)
        case text(maxLength: Int?)
        case list(items: Limits?, maxItems: Int?)
        case object(properties: [String: Limits], additional: Limits?, maxProperties: Int?)
        /// A named schema of `components/schemas`, looked up when checked (schemas may refer to themselves).
        case reference(String)
        case unchecked
    }

    enum Location: String, Sendable {
        case path, query, header
    }

    struct Parameter: Sendable {
        let name: String
        let location: Location
        let limits: Limits
    }

    struct Operation: Sendable {
        var parameters: [Parameter] = []
        /// The JSON body's limits; nil when the operation takes none, or takes it in another form.
        var body: Limits?
    }

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    private let schemas: [String: Limits]
    /// By `METHOD /path/{template}` as the contract writes it.
    private let operations: [String: Operation]

    /// The limits of the contract the server is built from, read once per process: every application a process
    /// configures (a test run configures hundreds) checks against the same contract.
    static func builtIn() throws -> RequestBounds {
        try shipped.get()
    }

    private static let shipped = Result<RequestBounds, Malformed> { () throws(Malformed) -> RequestBounds in
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw Malformed(description: "openapi.yaml is not among the server's resources")
        }
        do {
            return try RequestBounds(yaml: String(decoding: try Data(contentsOf: url), as: UTF8.self))
        } catch let malformed as Malformed {
            throw malformed
        } catch {
            throw Malformed(description: "openapi.yaml cannot be read: \(error)")
        }
    }

    init(yaml: String) throws {
        guard let document = try Yams.compose(yaml: yaml) else { throw Malformed(description: "openapi.yaml is empty") }
        let components = document["components"]
        var schemas: [String: Limits] = [:]
        for (name, schema) in components?["schemas"]?.mapping ?? [:] {
            if let name = name.string { schemas[name] = Self.limits(of: schema) }
        }
        let parameters = components?["parameters"]
        var operations: [String: Operation] = [:]
        for (path, item) in document["paths"]?.mapping ?? [:] {
            guard let path = path.string else { continue }
            let shared = item["parameters"]?.array() ?? []
            for (method, node) in item.mapping ?? [:] {
                guard let method = method.string, Self.methods.contains(method) else { continue }
                var operation = Operation()
                for parameter in shared + (node["parameters"]?.array() ?? []) {
                    let resolved = try Self.resolve(parameter, in: parameters)
                    guard let name = resolved["name"]?.string,
                        let location = resolved["in"]?.string.flatMap(Location.init),
                        let schema = resolved["schema"]
                    else { continue }
                    operation.parameters.append(
                        Parameter(name: name, location: location, limits: Self.limits(of: schema)))
                }
                if let body = node["requestBody"]?["content"]?["application/json"]?["schema"] {
                    operation.body = Self.limits(of: body)
                }
                operations["\(method.uppercased()) \(path)"] = operation
            }
        }
        self.schemas = schemas
        self.operations = operations
    }

    private static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]

    private static func resolve(_ node: Node, in parameters: Node?) throws -> Node {
        guard let reference = node["$ref"]?.string else { return node }
        let prefix = "#/components/parameters/"
        guard reference.hasPrefix(prefix), let found = parameters?[String(reference.dropFirst(prefix.count))] else {
            throw Malformed(description: "openapi.yaml refers to an unknown parameter: \(reference)")
        }
        return found
    }

    private static func limits(of schema: Node) -> Limits {
        if let reference = schema["$ref"]?.string {
            return .reference(String(reference.split(separator: "/").last ?? ""))
        }
        switch schema["type"]?.string {
        case "integer", "number":
            return .number(
                integer: schema["type"]?.string == "integer", minimum: schema["minimum"]?.float,
                maximum: schema["maximum"]?.float)
        case "string":
            return .text(maxLength: schema["maxLength"]?.int)
        case "array":
            return .list(items: schema["items"].map(limits(of:)), maxItems: schema["maxItems"]?.int)
        case "object":
            var properties: [String: Limits] = [:]
            for (name, property) in schema["properties"]?.mapping ?? [:] {
                if let name = name.string { properties[name] = limits(of: property) }
            }
            let additional = schema["additionalProperties"].flatMap { $0.mapping == nil ? nil : limits(of: $0) }
            return .object(properties: properties, additional: additional, maxProperties: schema["maxProperties"]?.int)
        default:
            return .unchecked
        }
    }

    // MARK: Checking

    /// The operation at `method` and `path` as the contract writes them; nil for one it does not have.
    func operation(_ method: String, _ path: String) -> Operation? {
        operations["\(method) \(path)"]
    }

    /// One integer a request can carry, with its limits: for the test that sends extreme values into each.
    struct IntegerPlace: Sendable {
        /// `PUT /me/plan-adjustments`
        let operation: String
        let location: String
        /// The parameter's name, or the JSON path into the body (`0` for an array's element, `a` for any key).
        let path: [String]
        let minimum: Double?
        let maximum: Double?
    }

    var integerPlaces: [IntegerPlace] {
        var places: [IntegerPlace] = []
        for (key, operation) in operations.sorted(by: { $0.key < $1.key }) {
            for parameter in operation.parameters {
                if case .number(true, let minimum, let maximum) = resolved(parameter.limits) {
                    places.append(
                        IntegerPlace(
                            operation: key, location: parameter.location.rawValue, path: [parameter.name],
                            minimum: minimum,
                            maximum: maximum))
                }
            }
            for (path, minimum, maximum) in operation.body.map({ integers(in: $0, at: [], seen: []) }) ?? [] {
                places.append(
                    IntegerPlace(operation: key, location: "body", path: path, minimum: minimum, maximum: maximum))
            }
        }
        return places
    }

    private func integers(in limits: Limits, at path: [String], seen: Set<String>) -> [([String], Double?, Double?)] {
        switch limits {
        case .number(true, let minimum, let maximum): return [(path, minimum, maximum)]
        case .number, .text, .unchecked: return []
        case .list(let items, _): return items.map { integers(in: $0, at: path + ["0"], seen: seen) } ?? []
        case .object(let properties, let additional, _):
            return properties.sorted { $0.key < $1.key }.flatMap {
                integers(in: $0.value, at: path + [$0.key], seen: seen)
            }
                + (additional.map { integers(in: $0, at: path + ["a"], seen: seen) } ?? [])
        case .reference(let name):
            guard !seen.contains(name), let schema = schemas[name] else { return [] }
            return integers(in: schema, at: path, seen: seen.union([name]))
        }
    }

    /// Checks the request's parameters and JSON body against `operation`'s limits.
    func check(_ operation: Operation, request: Request) throws(ValidationFailure) {
        var validator = FieldValidator()
        for parameter in operation.parameters {
            guard let text = value(of: parameter, in: request) else { continue }
            check(parameter: text, parameter.limits, field: parameter.name, into: &validator)
        }
        if let limits = operation.body, let body = request.body.data, body.readableBytes > 0,
            let document = try? JSONSerialization.jsonObject(
                with: Data(body.readableBytesView), options: [.fragmentsAllowed])
        {
            check(document, limits, at: [], into: &validator)
        }
        try validator.check()
    }

    private func value(of parameter: Parameter, in request: Request) -> String? {
        switch parameter.location {
        case .path: request.parameters.get(parameter.name)
        case .header: request.headers.first(name: parameter.name)
        case .query: Self.query(request.url.query, named: parameter.name)
        }
    }

    /// The value of the first `name=value` pair of a query.
    private static func query(_ query: String?, named name: String) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (part: Substring) in
                part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            if decode(parts[0]) == name { return parts.count > 1 ? decode(parts[1]) : "" }
        }
        return nil
    }

    private func check(parameter text: String, _ limits: Limits, field: String, into validator: inout FieldValidator) {
        switch resolved(limits) {
        case .number(let integer, let minimum, let maximum):
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard let number = integer ? Int64(trimmed).map(Double.init) : Double(trimmed), number.isFinite else {
                validator.add(field, .invalidFormat)
                return
            }
            check(number, minimum: minimum, maximum: maximum, field: field, into: &validator)
        case .text(let maxLength?) where text.unicodeScalars.count > maxLength:
            validator.add(field, .tooLong, limit: maxLength)
        default:
            break
        }
    }

    private func check(_ value: Any, _ limits: Limits, at path: [String], into validator: inout FieldValidator) {
        let field = path.isEmpty ? "body" : path.joined(separator: ".")
        switch (resolved(limits), value) {
        case (.number(_, let minimum, let maximum), let number as NSNumber) where !Self.isBoolean(number):
            check(number.doubleValue, minimum: minimum, maximum: maximum, field: field, into: &validator)
        case (.text(let maxLength?), let text as String) where text.unicodeScalars.count > maxLength:
            validator.add(field, .tooLong, limit: maxLength)
        case (.list(let items, let maxItems), let list as [Any]):
            if let maxItems, list.count > maxItems {
                validator.add(field, .tooLong, limit: maxItems)
                return
            }
            guard let items else { return }
            for (index, element) in list.enumerated() {
                check(element, items, at: path + [String(index)], into: &validator)
            }
        case (.object(let properties, let additional, let maxProperties), let object as [String: Any]):
            if let maxProperties, object.count > maxProperties {
                validator.add(field, .tooLong, limit: maxProperties)
                return
            }
            for (key, element) in object.sorted(by: { $0.key < $1.key }) {
                if let limits = properties[key] ?? additional {
                    check(element, limits, at: path + [key], into: &validator)
                }
            }
        default:
            break
        }
    }

    private func check(
        _ number: Double, minimum: Double?, maximum: Double?, field: String, into validator: inout FieldValidator
    ) {
        if let minimum, number < minimum {
            validator.add(field, .outOfRange, limit: Int(exactly: minimum))
        } else if let maximum, number > maximum {
            validator.add(field, .outOfRange, limit: Int(exactly: maximum))
        }
    }

    private func resolved(_ limits: Limits) -> Limits {
        var limits = limits
        var steps = 0
        while case .reference(let name) = limits, steps < 16 {
            limits = schemas[name] ?? .unchecked
            steps += 1
        }
        return limits
    }

    /// JSONSerialization reads `true` and `false` as numbers of the C type `char`, which no JSON number becomes.
    private static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}
