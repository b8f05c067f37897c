import Fluent
import Foundation
import InterludeCore

/// The arms of a study, stored as a JSON list of names.
enum StudyArms {
    static func names(of study: StudyRecord) -> [String] {
        study.arms.flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) } ?? []
    }
}
