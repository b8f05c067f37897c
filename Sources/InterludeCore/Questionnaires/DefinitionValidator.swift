import Foundation

extension InstrumentDefinition {
    public static let keyMaxLength = 64

    /// Every problem of the definition, each named by its place (`sections.0.items.2.options`), so whoever wrote
    /// it can find it. An empty list means the definition can be published.
    public func problems() -> [FieldError] {
        var checker = DefinitionChecker(definition: self)
        checker.run()
        return checker.validator.errors
    }

    /// Throws every problem at once.
    public func validate() throws(ValidationFailure) {
        let found = problems()
        if !found.isEmpty { throw ValidationFailure(found) }
    }

    /// A key is lower-case letters, digits and dashes, starting with a letter or digit.
    public static func isValidKey(_ key: String) -> Bool {
        guard let first = key.first, first.isASCII, first.isLetter || first.isNumber, key.count <= keyMaxLength
        else { return false }
        return key.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
    }

    /// An item or section id: letters, digits, `_`, `.` and `-`, as FHIR link ids and REDCap variables use.
    public static func isValidID(_ id: String) -> Bool {
        guard let first = id.first, first.isASCII, first.isLetter || first.isNumber, id.count <= 64 else {
            return false
        }
        return id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) }
    }
}

private struct DefinitionChecker {
    let definition: InstrumentDefinition
    var validator = FieldValidator()

    init(definition: InstrumentDefinition) {
        self.definition = definition
    }

    mutating func run() {
        if !InstrumentDefinition.isValidKey(definition.key) {
            validator.add("key", definition.key.isEmpty ? .required : .invalidFormat)
        }
        if definition.version < 1 { validator.add("version", .invalidValue) }
        if definition.title.isEmpty { validator.add("title", .required) }
        if definition.sections.isEmpty { validator.add("sections", .required) }
        if Set(definition.context).count != definition.context.count { validator.add("context", .duplicate) }
        checkSections()
        checkConditions()
        checkCycles()
        checkScores()
        checkCharacters()
    }

    /// Texts may run over several lines, but no text anywhere in the definition holds any other control character.
    private mutating func checkCharacters() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(definition), let path = JSONTextScan.controlCharacterPath(in: data) else {
            return
        }
        validator.add(path, .controlCharacter)
    }

    private mutating func checkSections() {
        var sectionIDs: Set<String> = []
        var itemIDs: Set<String> = []
        for (sectionIndex, section) in definition.sections.enumerated() {
            let sectionPath = "sections.\(sectionIndex)"
            if !InstrumentDefinition.isValidID(section.id) { validator.add("\(sectionPath).id", .invalidFormat) }
            if !sectionIDs.insert(section.id).inserted { validator.add("\(sectionPath).id", .duplicate) }
            if section.items.isEmpty { validator.add("\(sectionPath).items", .required) }
            if let options = section.options { checkOptions(options, path: "\(sectionPath).options") }
            for (itemIndex, item) in section.items.enumerated() {
                let path = "\(sectionPath).items.\(itemIndex)"
                if !InstrumentDefinition.isValidID(item.id) { validator.add("\(path).id", .invalidFormat) }
                if !itemIDs.insert(item.id).inserted { validator.add("\(path).id", .duplicate) }
                if item.text.isEmpty { validator.add("\(path).text", .required) }
                checkItem(item, path: path)
            }
        }
    }

    private mutating func checkOptions(_ options: [AnswerOption], path: String) {
        var codes: Set<String> = []
        for (index, option) in options.enumerated() {
            if option.code.isEmpty { validator.add("\(path).\(index).code", .required) }
            if !codes.insert(option.code).inserted { validator.add("\(path).\(index).code", .duplicate) }
            if option.label.isEmpty { validator.add("\(path).\(index).label", .required) }
            validator.number(option.score, field: "\(path).\(index).score")
            if option.score == nil { validator.number(option.numericValue, field: "\(path).\(index).code") }
        }
    }

    private mutating func checkItem(_ item: Item, path: String) {
        let bounds = [("min", item.min), ("max", item.max), ("step", item.step)]
        for (name, value) in bounds { validator.number(value, field: "\(path).\(name)") }
        guard bounds.allSatisfy({ $0.1.map { NumberLimits.accepts($0) } ?? true }) else { return }
        switch item.type {
        case .single, .multiple:
            let options = definition.options(of: item)
            if options.isEmpty {
                validator.add("\(path).options", .required)
            } else if let own = item.options {
                checkOptions(own, path: "\(path).options")
            }
            if item.type == .single, options.contains(where: \.exclusive) {
                validator.add("\(path).options", .notAllowed)
            }
        case .scale:
            guard let min = item.min, let max = item.max else {
                validator.add("\(path).\(item.min == nil ? "min" : "max")", .required)
                return
            }
            if min != min.rounded() || max != max.rounded() || min >= max || max - min > 100 {
                validator.add("\(path).max", .invalidValue)
            }
        case .slider:
            guard let min = item.min, let max = item.max else {
                validator.add("\(path).\(item.min == nil ? "min" : "max")", .required)
                return
            }
            if min >= max { validator.add("\(path).max", .invalidValue) }
            if let step = item.step, step <= 0 || step > max - min { validator.add("\(path).step", .invalidValue) }
        case .number:
            if let min = item.min, let max = item.max, min > max { validator.add("\(path).max", .invalidValue) }
            if let decimals = item.decimals, !(0...6).contains(decimals) {
                validator.add("\(path).decimals", .invalidValue)
            }
        case .text:
            if let limit = item.maxLength, !(1...10_000).contains(limit) {
                validator.add("\(path).maxLength", .invalidValue)
            }
        case .date, .dateTime:
            // A date-time item's bound may be a whole day.
            func valid(_ bound: String) -> Bool {
                LocalDate(bound) != nil || (item.type == .dateTime && InstrumentDefinition.isDateTime(bound))
            }
            for (name, bound) in [("earliest", item.earliest), ("latest", item.latest)] {
                if let bound, !valid(bound) { validator.add("\(path).\(name)", .invalidFormat) }
            }
            if let earliest = item.earliest, let latest = item.latest, earliest > latest {
                validator.add("\(path).latest", .invalidValue)
            }
        case .boolean, .time, .display:
            break
        }
        if item.type != .date && item.type != .dateTime {
            if item.earliest != nil { validator.add("\(path).earliest", .notAllowed) }
            if item.latest != nil { validator.add("\(path).latest", .notAllowed) }
        }
        if item.format != nil && item.type != .text { validator.add("\(path).format", .notAllowed) }
        if item.allowsOther && item.type != .single && item.type != .multiple {
            validator.add("\(path).allowsOther", .notAllowed)
        }
        if let pattern = item.pattern {
            if item.type != .text {
                validator.add("\(path).pattern", .notAllowed)
            } else if let problem = TextPattern.problem(pattern) {
                validator.add("\(path).pattern", problem, limit: problem == .tooLong ? TextPattern.maxLength : nil)
            }
        }
        if let linkId = item.linkId, linkId.isEmpty || linkId.count > 255 {
            validator.add("\(path).linkId", .invalidFormat)
        }
        if item.type == .display && item.required { validator.add("\(path).required", .notAllowed) }
    }

    private mutating func checkConditions() {
        for (sectionIndex, section) in definition.sections.enumerated() {
            if let condition = section.visibleWhen {
                check(condition, path: "sections.\(sectionIndex).visibleWhen", owner: nil)
            }
            for (itemIndex, item) in section.items.enumerated() {
                if let condition = item.visibleWhen {
                    check(condition, path: "sections.\(sectionIndex).items.\(itemIndex).visibleWhen", owner: item.id)
                }
            }
        }
    }

    private mutating func check(_ condition: Condition, path: String, owner: String?, depth: Int = 0) {
        if condition.clauses.isEmpty && condition.groups.isEmpty { validator.add("\(path).clauses", .required) }
        if depth == Condition.maxDepth, !condition.groups.isEmpty {
            validator.add("\(path).groups", .tooComplex, limit: Condition.maxDepth)
            return
        }
        for (index, group) in condition.groups.enumerated() {
            check(group, path: "\(path).groups.\(index)", owner: owner, depth: depth + 1)
        }
        for (index, clause) in condition.clauses.enumerated() {
            let clausePath = "\(path).clauses.\(index)"
            guard let target = definition.item(clause.item), target.type.takesAnswer else {
                validator.add("\(clausePath).item", .unknown)
                continue
            }
            if clause.item == owner { validator.add("\(clausePath).item", .cycle) }
            switch clause.operator {
            case .answered:
                if let value = clause.value, case .bool = value { break }
                if clause.value != nil { validator.add("\(clausePath).value", .wrongType) }
            case .equals, .notEquals:
                guard let value = clause.value else {
                    validator.add("\(clausePath).value", .required)
                    continue
                }
                if target.type == .single || target.type == .multiple {
                    let codes = definition.options(of: target).map(\.code)
                    let code: String? =
                        switch value {
                        case .text(let text): text
                        case .number(let number): codes.first { Double($0) == number }
                        default: nil
                        }
                    if code.map({ !codes.contains($0) }) ?? true { validator.add("\(clausePath).value", .notAnOption) }
                }
            case .greater, .less, .atLeast, .atMost:
                guard let value = clause.value else {
                    validator.add("\(clausePath).value", .required)
                    continue
                }
                if case .bool = value { validator.add("\(clausePath).value", .wrongType) }
                if case .list = value { validator.add("\(clausePath).value", .wrongType) }
            }
        }
    }

    /// A section whose visibility depends, through any chain of items, on itself can never be shown. Items that
    /// depend on each other in a circle are fine where the circle opens ("answer, or tick *don't know*": each
    /// shown while the other is empty): the answer at the end of the circle counts as given. A circle that nothing
    /// opens (hidden with no answers, and depending on nothing outside it) can never be shown.
    private mutating func checkCycles() {
        var dependencies: [String: [String]] = [:]
        for section in definition.sections {
            let sectionNode = "section:" + section.id
            dependencies[sectionNode] = (section.visibleWhen?.allClauses ?? []).map { "item:" + $0.item }
            for item in section.items {
                dependencies["item:" + item.id] =
                    [sectionNode] + (item.visibleWhen?.allClauses ?? []).map { "item:" + $0.item }
            }
        }
        /// Whether a chain of dependencies leads from `start` to `end`.
        func reaches(from start: String, to end: String) -> Bool {
            var seen: Set<String> = []
            var pending = dependencies[start] ?? []
            while let node = pending.popLast() {
                if node == end { return true }
                guard seen.insert(node).inserted else { continue }
                pending += dependencies[node] ?? []
            }
            return false
        }
        for (index, section) in definition.sections.enumerated()
        where section.visibleWhen != nil && reaches(from: "section:" + section.id, to: "section:" + section.id) {
            validator.add("sections.\(index).visibleWhen", .cycle)
        }
        var shown: Visibility?
        for (sectionIndex, section) in definition.sections.enumerated() {
            for (itemIndex, item) in section.items.enumerated() {
                guard let condition = item.visibleWhen else { continue }
                let node = "item:" + item.id
                guard reaches(from: node, to: node) else { continue }
                if shown == nil { shown = InstrumentLogic(definition).visibility([:]) }
                let closed = condition.allClauses.allSatisfy { reaches(from: "item:" + $0.item, to: node) }
                if closed, shown?.items.contains(item.id) == false {
                    validator.add("sections.\(sectionIndex).items.\(itemIndex).visibleWhen", .cycle)
                }
            }
        }
    }

    private mutating func checkScores() {
        var ids: Set<String> = []
        for (index, rule) in definition.scores.enumerated() {
            let path = "scores.\(index)"
            if !InstrumentDefinition.isValidID(rule.id) { validator.add("\(path).id", .invalidFormat) }
            if !ids.insert(rule.id).inserted { validator.add("\(path).id", .duplicate) }
            if rule.title.isEmpty { validator.add("\(path).title", .required) }
            if rule.items.isEmpty { validator.add("\(path).items", .required) }
            if Set(rule.items).count != rule.items.count { validator.add("\(path).items", .duplicate) }
            for (itemIndex, itemID) in rule.items.enumerated() {
                guard let item = definition.item(itemID) else {
                    validator.add("\(path).items.\(itemIndex)", .unknown)
                    continue
                }
                if definition.valueRange(of: item) == nil { validator.add("\(path).items.\(itemIndex)", .wrongType) }
            }
            for (reverseIndex, itemID) in rule.reverse.enumerated() where !rule.items.contains(itemID) {
                validator.add("\(path).reverse.\(reverseIndex)", .unknown)
            }
            if let minimum = rule.minAnswered, !(1...max(1, rule.items.count)).contains(minimum) {
                validator.add("\(path).minAnswered", .outOfRange)
            }
            if rule.factor == 0 { validator.add("\(path).factor", .invalidValue) }
            validator.number(rule.factor, field: "\(path).factor")
            if !(0...4).contains(rule.decimals) { validator.add("\(path).decimals", .invalidValue) }
            checkBands(rule, path: path)
        }
    }

    /// Bands must not overlap, leave no gap, and together cover every value the score can take.
    private mutating func checkBands(_ rule: ScoreRule, path: String) {
        guard !rule.bands.isEmpty else { return }
        for (index, band) in rule.bands.enumerated() {
            if band.label.isEmpty { validator.add("\(path).bands.\(index).label", .required) }
            if band.min > band.max { validator.add("\(path).bands.\(index).max", .invalidValue) }
            validator.number(band.min, field: "\(path).bands.\(index).min")
            validator.number(band.max, field: "\(path).bands.\(index).max")
        }
        guard rule.bands.allSatisfy({ NumberLimits.accepts($0.min) && NumberLimits.accepts($0.max) }) else { return }
        let sorted = rule.bands.enumerated().sorted { $0.element.min < $1.element.min }
        let tolerance = rule.resolution / 2
        for (previous, next) in zip(sorted, sorted.dropFirst()) {
            if next.element.min <= previous.element.max + 1e-9 {
                validator.add("\(path).bands.\(next.offset)", .overlap)
            } else if next.element.min - previous.element.max > rule.resolution + tolerance {
                validator.add("\(path).bands.\(next.offset)", .gap)
            }
        }
        if let range = definition.range(of: rule), let first = sorted.first, let last = sorted.last {
            if first.element.min > range.lowerBound + 1e-9 || last.element.max < range.upperBound - 1e-9 {
                validator.add("\(path).bands", .incomplete)
            }
        }
    }
}
