import Foundation
import InterludeCore
import Vapor

/// The arms of a study or a practice as a console form has them: a row each, with its name (rows without one are
/// left out), its share, how many participants it needs (empty: no limit), and `control` for a control arm; and
/// the method of allocation.
struct ArmFields: Content {
    var armName: [String]?
    var armShare: [String]?
    var armTarget: [String]?
    var armReceives: [String]?
    var allocation: String?

    /// One arm as the form shows it.
    struct Row: Encodable, Sendable {
        let index: Int
        /// The row's place as people count: 1, 2, 3…
        let number: Int
        let name: String
        let share: String
        let target: String
        let control: Bool
    }

    /// The rows as sent, then two empty ones, at least four, at most as many as a study may have arms.
    var rows: [Row] {
        let last = (armName ?? []).lastIndex { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? -1
        return (0..<min(max(last + 3, 4), StudyDraft.armsMaxCount)).map(row)
    }

    private func row(_ index: Int) -> Row {
        func value(_ list: [String]?) -> String { list.flatMap { $0.indices.contains(index) ? $0[index] : nil } ?? "" }
        return Row(
            index: index, number: index + 1, name: value(armName),
            share: value(armShare).isEmpty ? "1" : value(armShare),
            target: value(armTarget), control: value(armReceives) == "control")
    }

    /// The fields with a study's arms and their shares, targets and control arms.
    func withArms(_ names: [String], design: AllocationDesign?) -> Self {
        var copy = self
        let arms = names.map { name in design?.arms.first { $0.name == name } ?? AllocationArm(name) }
        copy.armName = names
        copy.armShare = arms.map { String($0.ratio) }
        copy.armTarget = arms.map { $0.target.map(String.init) ?? "" }
        copy.armReceives = arms.map { $0.control ? "control" : "all" }
        return copy
    }

    /// The arms named, and `settings` with their shares, targets and control arms from the rows; a share or target
    /// that is no whole number lies outside every range.
    func arms(settings: AllocationSettings) -> (names: [String], settings: AllocationSettings) {
        let rows = (armName ?? []).indices.map(row).filter { !$0.name.trimmingCharacters(in: .whitespaces).isEmpty }
        var settings = settings
        guard !rows.isEmpty else { return ([], settings) }
        func number(_ text: String, empty: Int) -> Int {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty ? empty : Int(trimmed) ?? -1
        }
        settings.ratios = rows.map { number($0.share, empty: 1) }
        settings.targets = rows.map { number($0.target, empty: 0) }
        settings.control = rows.contains(where: \.control) ? rows.map(\.control) : []
        return (rows.map(\.name), settings)
    }

    /// The first problem with the arms, shown above their rows.
    static func error(in errors: FormErrors) -> String? {
        ["arms", "allocationSettings.ratios", "allocationSettings.targets", "allocationSettings.control"]
            .lazy.compactMap { errors.fields[$0] }.first
    }
}
