import Foundation

/// Where the server finds its `Resources/` (texts, instruments, templates) and `Public/` (the apps' files): in the
/// folder `INTERLUDE_RESOURCES` names, else next to the executable or in a folder above it (a package's build
/// folder lies below the package), else in the working directory.
public enum ResourceLocation {
    /// Why no folder was found, in one line that says how to fix it.
    public struct Missing: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The folder that holds both, checked with `isDirectory`.
    public static func find(
        override: String?, executable: String?, workingDirectory: String, isDirectory: (String) -> Bool
    ) -> Result<String, Missing> {
        func holdsBoth(_ folder: String) -> Bool {
            isDirectory(join(folder, "Resources/Locales")) && isDirectory(join(folder, "Public"))
        }
        if let override, !override.isEmpty {
            return holdsBoth(override)
                ? .success(override)
                : .failure(
                    Missing(
                        description:
                            "INTERLUDE_RESOURCES is \(override), which holds no Resources/ and Public/ folders of Interlude; set it to the folder of the Interlude package (or of a release) that holds them."
                    ))
        }
        var folder = executable.map(parent)
        while let current = folder {
            if holdsBoth(current) { return .success(current) }
            let up = parent(current)
            folder = up == current ? nil : up
        }
        if holdsBoth(workingDirectory) { return .success(workingDirectory) }
        return .failure(
            Missing(
                description:
                    "Interlude's Resources/ and Public/ folders are neither next to \(executable ?? "the executable") nor in \(workingDirectory); start it in the Interlude package's folder or set INTERLUDE_RESOURCES to the folder that holds them."
            ))
    }

    static func join(_ folder: String, _ path: String) -> String {
        folder.hasSuffix("/") ? folder + path : folder + "/" + path
    }

    static func parent(_ path: String) -> String {
        var trimmed = path
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}

/// This build's version.
public enum InterludeVersion {
    public static let current = "0.2.0"
}
