/// Rows written or named in one statement: few enough for any engine's limit on bound parameters.
let statementBatch = 500

extension Array {
    /// The elements in consecutive slices of at most `size`.
    package func batches(of size: Int = statementBatch) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
