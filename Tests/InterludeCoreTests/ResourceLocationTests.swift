import Testing

@testable import InterludeCore

@Suite("Where the server finds Resources/ and Public/")
struct ResourceLocationTests {
    static let package = "/home/ops/interlude"
    static let folders: Set<String> = [
        "\(package)/Resources/Locales", "\(package)/Public", "/opt/release/Resources/Locales", "/opt/release/Public",
    ]

    static func find(_ override: String?, executable: String?, cwd: String) -> Result<String, ResourceLocation.Missing>
    {
        ResourceLocation.find(override: override, executable: executable, workingDirectory: cwd) {
            folders.contains($0)
        }
    }

    @Test("the package above the build folder, from any working directory")
    func aboveTheExecutable() throws {
        #expect(
            try Self.find(
                nil, executable: "\(Self.package)/.build/x86_64-unknown-linux-gnu/debug/interlude", cwd: "/tmp"
            ).get() == Self.package)
        #expect(try Self.find(nil, executable: "/opt/release/interlude", cwd: "/").get() == "/opt/release")
    }

    @Test("the working directory when the executable lies elsewhere")
    func workingDirectory() throws {
        #expect(try Self.find(nil, executable: "/usr/local/bin/interlude", cwd: Self.package).get() == Self.package)
    }

    @Test("INTERLUDE_RESOURCES wins, and a wrong one is named")
    func override() throws {
        #expect(
            try Self.find("/opt/release", executable: "\(Self.package)/.build/debug/interlude", cwd: Self.package).get()
                == "/opt/release")
        guard
            case .failure(let missing) = Self.find(
                "/opt/nothing", executable: "\(Self.package)/.build/debug/interlude", cwd: Self.package)
        else {
            Issue.record("a folder without resources was taken")
            return
        }
        #expect(missing.description.contains("INTERLUDE_RESOURCES is /opt/nothing"))
    }

    @Test("nowhere: one line that says where it looked and how to fix it")
    func nowhere() {
        guard case .failure(let missing) = Self.find(nil, executable: "/usr/local/bin/interlude", cwd: "/tmp") else {
            Issue.record("found resources where there are none")
            return
        }
        #expect(!missing.description.contains("\n"))
        #expect(missing.description.contains("/usr/local/bin/interlude") && missing.description.contains("/tmp"))
        #expect(missing.description.contains("INTERLUDE_RESOURCES"))
    }
}
