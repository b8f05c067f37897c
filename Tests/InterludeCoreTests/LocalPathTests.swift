import InterludeCore
import Testing

@Suite("A next= parameter leads only to a page of this site, as the browser reads it")
struct LocalPathTests {
    @Test(
        "paths of this site are kept", arguments: ["/app", "/app/profile?tab=1#top", "/console/alerts?acknowledged=1"])
    func kept(path: String) {
        #expect(LocalPath.safe(path) == path)
    }

    @Test(
        "tabs and line breaks are dropped as the browser drops them",
        arguments: [("/app/\tprofile", "/app/profile"), (" /app\n", "/app")])
    func normalised(candidate: String, path: String) {
        #expect(LocalPath.safe(candidate) == path)
    }

    @Test(
        "whatever the browser would read as another site is refused",
        arguments: [
            "//evil.example", "/\t/evil.example", "/\n/evil.example", "/\r\n/evil.example", "\t//evil.example",
            " //evil.example", "/\\evil.example", "\\\\evil.example", "https://evil.example", "javascript:alert(1)",
            "evil.example", "", "/\u{0}x", "/\u{7F}x",
        ])
    func refused(candidate: String) {
        #expect(LocalPath.safe(candidate) == nil)
    }
}
