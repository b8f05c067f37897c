import Foundation
import InterludeCore

/// Where a page of a list ended: the sort key and the id of the page's last item. The next page starts after it,
/// so items added meanwhile never push one onto two pages or past both.
struct PageCursor: Sendable, Equatable {
    /// Compared as text: moments are written as zero-padded milliseconds so that text order is time order.
    let key: String
    let id: UUID

    init(key: String, id: UUID) {
        self.key = key
        self.id = id
    }

    init(moment: Date, id: UUID) {
        self.init(key: SortKey.moment(moment), id: id)
    }

    init?(_ text: String) {
        guard let dot = text.lastIndex(of: "."), let id = UUID(uuidString: String(text[text.index(after: dot)...])),
            let data = Data(base64URLEncoded: String(text[..<dot])), let key = String(data: data, encoding: .utf8)
        else { return nil }
        self.init(key: key, id: id)
    }

    var text: String { "\(Data(key.utf8).base64URLEncoded).\(id.lowercasedText)" }

    /// Whether an item lies after this cursor in a list ordered by key then id, both the same way.
    func precedes(key other: String, id otherID: UUID, descending: Bool) -> Bool {
        let mine = (key, id.lowercasedText)
        let theirs = (other, otherID.lowercasedText)
        return descending ? theirs < mine : theirs > mine
    }
}

/// Which page of a list a client asks for: after a cursor, at most `limit` items.
struct PageRequest: Sendable {
    static let defaultLimit = 50
    static let maxLimit = 200

    let cursor: PageCursor?
    let limit: Int

    /// The whole list on one page.
    static let all = PageRequest(cursor: nil, unlimited: ())

    private init(cursor: PageCursor?, unlimited: Void) {
        self.cursor = cursor
        self.limit = .max
    }

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

    /// The page of `items`, ordered by key then id (descending unless asked otherwise), after the request's cursor.
    init(of items: [Item], _ request: PageRequest, key: (Item) -> String, id: (Item) -> UUID, descending: Bool = true) {
        let keyed = items.map { (item: $0, key: key($0), id: id($0)) }.sorted { left, right in
            let (first, second) = descending ? (right, left) : (left, right)
            return (first.key, first.id.lowercasedText) < (second.key, second.id.lowercasedText)
        }
        let after =
            request.cursor.map { cursor in
                keyed.filter { cursor.precedes(key: $0.key, id: $0.id, descending: descending) }
            } ?? keyed
        let page = Array(after.prefix(request.limit))
        self.items = page.map(\.item)
        self.next = after.count > page.count ? page.last.map { PageCursor(key: $0.key, id: $0.id).text } : nil
    }

    private init(items: [Item], next: String?) {
        self.items = items
        self.next = next
    }

    /// The same page with each item changed.
    func map<Other: Sendable>(_ transform: (Item) throws -> Other) rethrows -> ListPage<Other> {
        ListPage<Other>(items: try items.map(transform), next: next)
    }

    /// The page of `items` ordered newest first (oldest first when not `descending`), ties by id the same way.
    init(of items: [Item], _ request: PageRequest, moment: (Item) -> Date, id: (Item) -> UUID, descending: Bool = true)
    {
        self.init(of: items, request, key: { SortKey.moment(moment($0)) }, id: id, descending: descending)
    }
}

/// An item of a list that runs by one moment of it, with ties broken by its id.
protocol MomentListed {
    var listedAt: Date { get }
    var listedID: UUID { get }
}

extension ListPage where Item: MomentListed {
    /// The page of `items` ordered by their moment, newest first unless asked otherwise.
    init(of items: [Item], _ request: PageRequest, descending: Bool = true) {
        self.init(of: items, request, moment: \.listedAt, id: \.listedID, descending: descending)
    }
}

extension RecordService.Stored: MomentListed {
    var listedAt: Date { record.occurredAt }
    var listedID: UUID { record.id! }
}

extension ResponseService.Stored: MomentListed {
    var listedAt: Date { record.completedAt }
    var listedID: UUID { record.id! }
}

extension InterventionService.Opened: MomentListed {
    var listedAt: Date { deliverAt }
    var listedID: UUID { id }
}

extension AppointmentService.Shown: MomentListed {
    var listedAt: Date { startsAt }
    var listedID: UUID { id }
}

extension NotificationRecord: MomentListed {
    var listedAt: Date { dueAt }
    var listedID: UUID { id! }
}
