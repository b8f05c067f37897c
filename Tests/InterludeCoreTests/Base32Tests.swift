import InterludeCore
import Testing

@Suite("Base32")
struct Base32Tests {
    @Test(
        "encodes and decodes the vectors of RFC 4648",
        arguments: [
            ("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======"),
        ])
    func vectors(plain: String, encoded: String) {
        #expect(Base32.encode(Array(plain.utf8)) == encoded)
        #expect(Base32.decode(encoded) == Array(plain.utf8))
    }

    @Test("decoding ignores case, spaces and padding, and refuses letters outside the alphabet")
    func lenient() {
        #expect(Base32.decode("mzxw 6ytb oi") == Array("foobar".utf8))
        #expect(Base32.decode("MZXW1") == nil)
        #expect(Base32.encode(Array("foobar".utf8), padded: false) == "MZXW6YTBOI")
    }
}
