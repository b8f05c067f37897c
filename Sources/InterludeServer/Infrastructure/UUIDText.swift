import Foundation
import InterludeSQLite

extension UUID {
    /// The id as the API, exports and the console write it: lower case.
    package var lowercasedText: String { UUIDText.lower(self) }
}
