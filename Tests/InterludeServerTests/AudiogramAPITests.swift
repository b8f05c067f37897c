import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("Health record: audiograms entered by the patient, drawn as SVG, read by their therapist and as FHIR")
struct AudiogramAPITests {
    typealias Shown = Components.Schemas.Audiogram

    static func point(
        _ ear: String, _ frequency: Int, _ threshold: Int?, conduction: String? = nil, masked: Bool? = nil
    ) -> JSONValue {
        var point: [String: JSONValue] = ["ear": .string(ear), "frequencyHz": .number(Double(frequency))]
        point["thresholdDbHL"] = threshold.map { JSONValue.number(Double($0)) } ?? JSONValue.absent
        if let conduction { point["conduction"] = .string(conduction) }
        if let masked { point["masked"] = .bool(masked) }
        return .object(point)
    }

    /// Right ear from 15 to 40 dB HL, left 20 to 50 with no response at 8 kHz, a masked and a bone point.
    static func body(_ app: TestContext, id: UUID = UUID(), at date: Date? = nil, shift: Int = 0) -> JSONValue {
        let right = zip([250, 500, 1000, 2000, 4000, 8000], [15, 20, 25, 30, 35, 40]).map {
            point("right", $0, $1 + shift)
        }
        let left = zip([250, 500, 1000, 2000, 4000], [20, 25, 35, 40, 50]).map { point("left", $0, $1 + shift) }
        let extra = [
            point("left", 8000, nil), point("right", 1000, 20, conduction: "bone"),
            point("left", 1000, 30, conduction: "bone", masked: true),
        ]
        return [
            "id": .string(id.uuidString), "measuredAt": QuestionnaireAPITests.iso(date ?? app.clock.now),
            "points": .array(right + left + extra),
        ]
    }

    @Test(
        "an audiogram is stored once with its averages, and every wrong point is named: range, 5 dB steps, frequency, duplicates"
    )
    func createAndRefuse() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")
            let id = UUID()
            let now = QuestionnaireAPITests.iso(app.clock.now)

            // act
            let created = try await ada.send(.POST, "/me/audiograms", json: Self.body(app, id: id))
            let repeated = try await ada.send(.POST, "/me/audiograms", json: Self.body(app, id: id))
            let refused = try await ada.send(
                .POST, "/me/audiograms",
                json: [
                    "id": .string(UUID().uuidString), "measuredAt": now,
                    "points": [
                        Self.point("right", 1000, 42), Self.point("middle", 500, 10), Self.point("left", 500, 10),
                        Self.point("left", 500, 15), Self.point("left", 4000, 10, conduction: "laser"),
                    ],
                ])
            let beyondLimits = try await ada.send(
                .POST, "/me/audiograms",
                json: [
                    "id": .string(UUID().uuidString), "measuredAt": now,
                    "points": [
                        Self.point("right", 1000, 40), Self.point("right", 2000, 125), Self.point("right", 50, 10),
                    ],
                ])
            let empty = try await ada.send(
                .POST, "/me/audiograms", json: ["id": .string(UUID().uuidString), "measuredAt": now, "points": []])
            let list = try await ada.send(.GET, "/me/audiograms").decoded([Shown].self)

            // verify
            #expect(created.status == .created, "\(created.text)")
            let shown = try created.decoded(Shown.self)
            #expect(shown.points.count == 14)
            #expect(shown.rightAverage == 27.5 && shown.leftAverage == 37.5)
            #expect(shown.points.first { $0.ear == .left && $0.frequencyHz == 8000 }?.thresholdDbHL == nil)
            #expect(repeated.status == .ok)
            #expect(
                Set(refused.body.problemFields) == [
                    "points.0.thresholdDbHL", "points.1.ear", "points.3.frequencyHz", "points.4.conduction",
                ], "\(refused.text)")
            #expect(
                Set(beyondLimits.body.problemFields) == ["points.1.thresholdDbHL", "points.2.frequencyHz"], "the door")
            #expect(empty.body.problemFields == ["points"])
            #expect(list.map(\.id) == [id.uuidString.lowercased()])
            #expect(try await app.count("records") == 1)
        }
    }

    @Test("the chart puts each point where its frequency and level are on the axes, in the ear's colour and symbol")
    func chart() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")
            let (ben, _) = try await app.patient("ben@example.org")
            let earlier = UUID()
            let latest = UUID()
            _ = try await ada.send(
                .POST, "/me/audiograms",
                json: Self.body(app, id: earlier, at: app.clock.now.addingTimeInterval(-90 * 86_400)))
            _ = try await ada.send(.POST, "/me/audiograms", json: Self.body(app, id: latest, shift: 10))

            // act
            let both = try await ada.send(.GET, "/me/audiograms/\(latest)/chart.svg")
            let leftOnly = try await ada.send(.GET, "/me/audiograms/\(latest)/chart.svg?ears=left")
            let compared = try await ada.send(.GET, "/me/audiograms/\(latest)/chart.svg?compare=\(earlier)")
            let unknownCompare = try await ada.send(.GET, "/me/audiograms/\(latest)/chart.svg?compare=\(UUID())")
            let bens = try await ben.send(.GET, "/me/audiograms/\(latest)/chart.svg")

            // verify
            #expect(both.status == .ok)
            #expect(both.headers.contentType?.description.hasPrefix("image/svg+xml") == true)
            let svg = try SVGChart(both.text)
            #expect(svg.title.contains("both ears"))
            #expect(svg.description.contains("Right ear: pure-tone average 37.5 dB HL (moderate loss)"))
            let x500 = try #require(svg.xGrid[500])
            let x1000 = try #require(svg.xGrid[1000])
            let x2000 = try #require(svg.xGrid[2000])
            #expect(abs((x2000 - x1000) - (x1000 - x500)) < 0.01, "an octave is the same width everywhere")
            let y0 = try #require(svg.yGrid[0])
            let y40 = try #require(svg.yGrid[40])
            let y120 = try #require(svg.yGrid[120])
            #expect(y0 < y40 && y40 < y120, "louder levels lie lower")
            let right1000 = try #require(
                svg.marks.first { $0.ear == "right" && $0.frequency == 1000 && $0.conduction == "air" })
            #expect(right1000.threshold == "35" && abs(right1000.x - x1000) < 0.01)
            #expect(abs(right1000.y - (y40 - (y40 - y0) / 8)) < 0.01, "35 dB HL between the 30 and 40 lines")
            #expect(right1000.shapes == ["circle"] && right1000.stroke == "#c62828")
            let left2000 = try #require(svg.marks.first { $0.ear == "left" && $0.frequency == 2000 })
            #expect(
                left2000.shapes == ["path"] && left2000.stroke == "#1550a8"
                    && abs(left2000.y - y40 - (y40 - y0) / 4) < 0.01)
            let noResponse = try #require(svg.marks.first { $0.ear == "left" && $0.frequency == 8000 })
            #expect(noResponse.threshold == "none" && abs(noResponse.y - y120) < 0.01 && noResponse.shapes.count == 2)
            #expect(svg.marks.first { $0.masked && $0.conduction == "bone" }?.shapes == ["path"])
            #expect(svg.bands == ["normal", "mild", "moderate", "moderatelySevere", "severe", "profound"])
            #expect(try SVGChart(leftOnly.text).marks.allSatisfy { $0.ear == "left" })
            let comparison = try SVGChart(compared.text)
            #expect(comparison.marks.filter { $0.measurement == "earlier" }.count == 14)
            #expect(comparison.marks.filter { $0.measurement == "current" }.count == 14)
            #expect(comparison.description.contains("Before: 27.5 dB HL."))
            #expect(unknownCompare.body.problemFields == ["compare"])
            #expect(bens.status == .notFound)
        }
    }

    @Test(
        "drawn for a phone's width in the reader's language: no text under 12 px, whole octaves labelled, decimal commas"
    )
    func phoneChart() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")
            let earlier = UUID()
            let latest = UUID()
            _ = try await ada.send(
                .POST, "/me/audiograms",
                json: Self.body(app, id: earlier, at: app.clock.now.addingTimeInterval(-90 * 86_400)))
            _ = try await ada.send(.POST, "/me/audiograms", json: Self.body(app, id: latest, shift: 10))
            let german: HTTPHeaders = ["Accept-Language": "de"]

            // act
            let phone = try await ada.send(
                .GET, "/me/audiograms/\(latest)/chart.svg?width=345&compare=\(earlier)", headers: german)
            let tooNarrow = try await ada.send(.GET, "/me/audiograms/\(latest)/chart.svg?width=100")

            // verify
            #expect(phone.status == .ok)
            #expect(phone.text.contains(#"viewBox="0 0 345 460""#), "drawn for the width, so one unit is one pixel")
            let sizes = phone.text.matches(of: /<text[^>]*font-size="([0-9.]+)"/).compactMap { Double($0.output.1) }
            #expect(!sizes.isEmpty && sizes.allSatisfy { $0 >= 12 }, "\(sizes)")
            #expect(phone.text.contains("mittelgradiger Hörverlust") && phone.text.contains("Frequenz (Hz)"))
            #expect(!phone.text.contains("moderate loss"))
            #expect(phone.text.contains("37,5 dB HL"), "a German decimal comma")
            #expect(!phone.text.contains(">750<") && phone.text.contains(">500<"), "only whole octaves are labelled")
            #expect(tooNarrow.body.problemFields == ["width"])
        }
    }

    @Test(
        "the therapist reads an audiogram, audited; as FHIR it is the LOINC panel with per-ear, per-frequency components"
    )
    func therapistAndFHIR() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "t@example.org")
            let (ada, adaID) = try await app.patient("ada@example.org")
            try await app.pair(ada, with: therapist)
            let id = UUID()
            _ = try await ada.send(.POST, "/me/audiograms", json: Self.body(app, id: id))

            // act
            let listed = try await therapist.send(.GET, "/patients/\(adaID)/audiograms").decoded([Shown].self)
            let fhir = try await therapist.send(.GET, "/audiograms/\(id)?format=fhir")
            let own = try await ada.send(.GET, "/audiograms/\(id)")

            // verify
            #expect(listed.map(\.id) == [id.uuidString.lowercased()])
            #expect(own.status == .ok && own.body["points"].array.count == 14)
            #expect(fhir.body["resourceType"].string == "Observation")
            #expect(fhir.body["code"]["coding"][0]["code"].string == "89015-2")
            #expect(fhir.body["subject"]["identifier"]["value"].string?.isEmpty == false)
            let components = fhir.body["component"].array
            #expect(components.count == 14)
            let right1000 = try #require(components.first { $0["code"]["coding"][0]["code"].string == "89017-8" })
            #expect(right1000["valueQuantity"]["value"].int == 25 && right1000["valueQuantity"]["code"].string == "dB")
            let right250 = try #require(
                components.first { $0["code"]["text"].string == "Hearing threshold Ear - right --250 Hz" })
            #expect(right250["code"]["coding"].isNull, "LOINC has no code for 250 Hz")
            #expect(right250["extension"][0]["valueQuantity"]["value"].int == 250)
            let bone = try #require(
                components.first {
                    $0["code"]["text"].string?.contains("bone") == true
                        && $0["extension"][0]["valueQuantity"]["value"].int == 1000
                        && $0["code"]["text"].string?.contains("right") == true
                })
            #expect(bone["code"]["coding"].isNull, "LOINC's codes are for air conduction")
            let noResponse = try #require(components.first { $0["code"]["coding"][0]["code"].string == "89028-5" })
            #expect(
                noResponse["valueQuantity"].isNull
                    && noResponse["dataAbsentReason"]["coding"][0]["code"].string == "unknown")
            let audits = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == AuditAction.recordsRead.rawValue
            ).all()
            #expect(
                audits.map(\.target).sorted { ($0 ?? "") < ($1 ?? "") } == [
                    "audiogram:\(id.uuidString.lowercased())", "audiograms",
                ])
        }
    }
}

/// The parts of an audiogram SVG a reader relies on, read back with an XML parser.
struct SVGChart {
    struct Mark {
        var measurement = ""
        var ear = ""
        var frequency = 0
        var threshold = ""
        var conduction = ""
        var masked = false
        var x = 0.0
        var y = 0.0
        var stroke = ""
        var shapes: [String] = []
    }

    var title = ""
    var description = ""
    var xGrid: [Int: Double] = [:]
    var yGrid: [Int: Double] = [:]
    var marks: [Mark] = []
    var bands: [String] = []

    init(_ text: String) throws {
        let reader = Reader()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = reader
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.fileReadCorruptFile) }
        self = reader.chart
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var chart = SVGChart.empty
        var path: [String] = []
        var text = ""
        var mark: Mark?

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            path.append(name)
            text = ""
            switch (name, attributes["class"]) {
            case ("line", "x-grid"):
                chart.xGrid[Int(attributes["data-frequency"] ?? "") ?? -1] = Double(attributes["x1"] ?? "")
            case ("line", "y-grid"):
                chart.yGrid[Int(attributes["data-level"] ?? "") ?? -1] = Double(attributes["y1"] ?? "")
            case ("g", "band"):
                chart.bands.append(attributes["data-band"] ?? "")
            case ("g", "mark"):
                let numbers = (attributes["transform"] ?? "").dropFirst("translate(".count).dropLast().split(
                    separator: " "
                ).compactMap { Double($0) }
                mark = Mark(
                    measurement: attributes["data-measurement"] ?? "", ear: attributes["data-ear"] ?? "",
                    frequency: Int(attributes["data-frequency"] ?? "") ?? 0,
                    threshold: attributes["data-threshold"] ?? "",
                    conduction: attributes["data-conduction"] ?? "", masked: attributes["data-masked"] == "true",
                    x: numbers.first ?? .nan, y: numbers.last ?? .nan, stroke: attributes["stroke"] ?? "")
            case ("circle", _), ("path", _), ("rect", _):
                mark?.shapes.append(name)
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if path.count == 2, name == "title" { chart.title = text }
            if path.count == 2, name == "desc" { chart.description = text }
            if name == "g", let done = mark {
                chart.marks.append(done)
                mark = nil
            }
            path.removeLast()
        }
    }

    private static let empty = SVGChart()
    private init() {}
}
