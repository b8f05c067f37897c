import Foundation
import InterludeCore

/// Where a page of a list ended: the moment the list is ordered by and the id of the page's last item. The next
/// page starts after it, so items added meanwhile never push one onto two pages or past both.
struct PageCursor: Sendable, Equatable {
    let moment: Date
    let id: UUID

    init(moment: Date, id: UUID) {
        self.moment = moment
        self.id = id
    }

    init?(_ text: String) {
        let parts = text.split(separator: "_")
        guard parts.count == 2, let milliseconds = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else { return nil }
        moment = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        self.id = id
    }

    /// Milliseconds, as stored moments are compared at that precision.
    var text: String { "\(Int64((moment.timeIntervalSince1970 * 1000).rounded()))_\(id.uuidString.lowercased())" }

    /// Whether an item lies after this cursor in a list ordered newest first, ties by id descending.
    func precedes(moment other: Date, id otherID: UUID) -> Bool {
        let mine = Int64((moment.timeIntervalSince1970 * 1000).rounded())
        let theirs = Int64((other.timeIntervalSince1970 * 1000).rounded())
        return theirs < mine || (theirs == mine && otherID.uuidString.lowercased() < id.uuidString.lowercased())
    }
}

/// Which page of a list a client asks for: after a cursor, at most `limit` items.
struct PageRequest: Sendable {
    static let defaultLimit = 50
    static let maxLimit = 200

    let cursor: PageCursor?
    let limit: Int

    /// The query's `cursor` and `limit`, checked: 422 naming the parameter when either is unusable.
    init(cursor: String?, limit: Int?) throws {
        var validator = FieldValidator()
        self.init(cursor: cursor, limit: limit, checking: &validator)
        try validator.check()
    }

    /// The query's `cursor` and `limit`, their problems added to those of the request's other parameters.
    init(cursor: String?, limit: Int?, checking validator: inout FieldValidator) {
        let parsed = cursor.flatMap(PageCursor.init)
        if cursor != nil, parsed == nil { validator.add("cursor", .invalidFormat) }
        if let limit, !(1...Self.maxLimit).contains(limit) { validator.add("limit", .outOfRange, limit: Self.maxLimit) }
        self.cursor = parsed
        self.limit = min(max(limit ?? Self.defaultLimit, 1), Self.maxLimit)
    }
}

/// One page of a list and the cursor of the next, nil on the last page.
struct ListPage<Item: Sendable>: Sendable {
    let items: [Item]
    let next: String?

    /// The page of `items` (already ordered newest first, ties by id descending) after the request's cursor.
    init(of items: [Item], _ request: PageRequest, moment: (Item) -> Date, id: (Item) -> UUID) {
        let after = request.cursor.map { cursor in items.filter { cursor.precedes(moment: moment($0), id: id($0)) } } ?? items
        let page = Array(after.prefix(request.limit))
        self.items = page
        self.next = after.count > page.count ? page.last.map { PageCursor(moment: moment($0), id: id($0)).text } : nil
    }
}
