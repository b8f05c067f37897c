import Testing
@testable import InterludeCore
@Test func placeholderCore() { #expect(EmailAddress("a@b.cd") != nil) }
