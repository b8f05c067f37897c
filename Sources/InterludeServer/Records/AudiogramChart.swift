import Foundation
import InterludeCore

/// An audiogram drawn the way audiologists read one: frequency on a logarithmic axis along the top, hearing level
/// in dB HL growing downwards, the hearing-loss bands shaded behind, the right ear as red circles joined by a
/// line and the left ear as blue crosses joined by a dashed one (masked: triangles and squares; bone conduction:
/// < and >, masked [ and ]; no response: the mark at the loudest level with an arrow). An earlier measurement
/// can be drawn faintly beside it. Every mark is a group translated to its point and names its ear, frequency and
/// threshold, so the picture can be checked; a title and a description say the same in words.
struct AudiogramChart: Sendable {
    enum Ears: String, Sendable, CaseIterable {
        case both
        case right
        case left

        var shown: [Audiogram.Ear] {
            switch self {
            case .both: [.right, .left]
            case .right: [.right]
            case .left: [.left]
            }
        }
    }

    let audiogram: Audiogram
    /// A measurement to compare with, drawn faintly.
    let earlier: Audiogram?
    let ears: Ears
    let localizer: Localizer
    let language: Language
    let display: DateDisplay
    let id: String
    /// The width it is shown at, in CSS pixels; the text keeps its size whatever the width.
    var width = ChartWidth.desktop

    static let height = 460.0
    private static let left = 60.0
    private static let right = 32.0
    private static let top = 52.0
    private static let bottom = 60.0
    private static let levels = Audiogram.thresholdRange
    private static let colors: [Audiogram.Ear: String] = [.right: "#c62828", .left: "#1550a8"]
    /// Bands darken with the loss they stand for; their names tell them apart without colour.
    private static let bandFills = ["#ffffff", "#f3f4f6", "#e8eaee", "#dcdfe5", "#d0d4dc", "#c4c9d3"]

    private var plotWidth: Double { width - Self.left - Self.right }
    /// Narrow: only whole octaves are labelled, and the comparison's dates go below the ears.
    private var narrow: Bool { width < 500 }
    private var plotHeight: Double { Self.height - Self.top - Self.bottom }

    /// The highest frequency on the axis: 8 kHz, or 16 or 20 kHz when extended frequencies were measured.
    private var highest: Int {
        let measured = ([audiogram] + (earlier.map { [$0] } ?? [])).flatMap(\.points).map(\.frequencyHz).max() ?? 8000
        return measured <= 8000 ? 8000 : (measured <= 16000 ? 16000 : Audiogram.frequencyRange.upperBound)
    }

    func x(_ frequency: Int) -> Double {
        let lowest = Double(Audiogram.frequencyRange.lowerBound)
        return Self.left + plotWidth * log2(Double(frequency) / lowest) / log2(Double(highest) / lowest)
    }

    func y(_ level: Int) -> Double {
        Self.top + plotHeight * Double(level - Self.levels.lowerBound)
            / Double(Self.levels.upperBound - Self.levels.lowerBound)
    }

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        localizer.text(key, language, arguments)
    }

    var title: String {
        let date = display.date(audiogram.measuredAt)
        if let earlier {
            return text(
                "audiogram.title_compared",
                [
                    "date": date, "earlier": display.date(earlier.measuredAt),
                    "ears": text("audiogram.ears.\(ears.rawValue)"),
                ])
        }
        return text("audiogram.title", ["date": date, "ears": text("audiogram.ears.\(ears.rawValue)")])
    }

    /// Each ear's pure-tone average and its band, and how it moved since the earlier measurement.
    var description: String {
        ears.shown.map { ear in
            let name = text("audiogram.ear.\(ear.rawValue)")
            guard let average = audiogram.pureToneAverage(ear) else {
                return text("audiogram.no_average", ["ear": name])
            }
            var sentence = text(
                "audiogram.average",
                [
                    "ear": name, "value": average.plainText(in: language),
                    "band": text("audiogram.band.\(Audiogram.Band.of(average).rawValue)"),
                ])
            if let before = earlier?.pureToneAverage(ear) {
                sentence += " " + text("audiogram.average_before", ["value": before.plainText(in: language)])
            }
            return sentence
        }.joined(separator: " ")
    }

    var svg: String {
        var parts: [String] = [
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(n(width)) \##(n(Self.height))" width="\##(n(width))" role="img" aria-labelledby="\##(id)-title \##(id)-desc" class="chart audiogram" font-family="sans-serif">"##,
            "<title id=\"\(id)-title\">\(title.htmlEscaped)</title>",
            "<desc id=\"\(id)-desc\">\(description.htmlEscaped)</desc>",
        ]
        parts += bands + grid
        if let earlier { parts += marks(of: earlier, measurement: "earlier") }
        parts += marks(of: audiogram, measurement: "current")
        parts += legend
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    private var bands: [String] {
        Audiogram.Band.allCases.enumerated().map { index, band in
            let top = y(max(band.range.lowerBound, Self.levels.lowerBound))
            let bottom = y(band.range.upperBound)
            let x = n(Self.left + plotWidth - 6)
            // A name too long for a narrow chart's width takes two lines, the second on the band's lower edge.
            let lines = Self.lines(text("audiogram.band.\(band.rawValue)"), fitting: plotWidth - 12)
            let name =
                lines.count == 1
                ? lines[0].htmlEscaped
                : ##"<tspan x="\##(x)" dy="-14">\##(lines[0].htmlEscaped)</tspan><tspan x="\##(x)" dy="14">\##(lines[1].htmlEscaped)</tspan>"##
            return
                ##"<g class="band" data-band="\##(band.rawValue)"><rect x="\##(n(Self.left))" y="\##(n(top))" width="\##(n(plotWidth))" height="\##(n(bottom - top))" fill="\##(Self.bandFills[index])"/><text x="\##(x)" y="\##(n(bottom - 6))" text-anchor="end" font-size="12" fill="#4a5563">\##(name)</text></g>"##
        }
    }

    private var grid: [String] {
        var parts: [String] = []
        let ticks = (Audiogram.standardFrequencies + (highest > 8000 ? [highest] : [])).filter { $0 <= highest }
        for frequency in ticks {
            let label = frequency >= 1000 ? "\((Double(frequency) / 1000).plainText(in: language))k" : "\(frequency)"
            parts.append(
                ##"<line class="x-grid" data-frequency="\##(frequency)" x1="\##(n(x(frequency)))" y1="\##(n(Self.top))" x2="\##(n(x(frequency)))" y2="\##(n(Self.top + plotHeight))" stroke="#b8bfca" stroke-width="1"/>"##
            )
            let octave = (frequency / 125).nonzeroBitCount == 1
            if narrow && !octave && frequency != highest { continue }
            parts.append(
                ##"<text x="\##(n(x(frequency)))" y="\##(n(Self.top - 8))" text-anchor="middle" font-size="12" fill="#1b2733">\##(label)</text>"##
            )
        }
        for level in stride(from: Self.levels.lowerBound, through: Self.levels.upperBound, by: 10) {
            parts.append(
                ##"<line class="y-grid" data-level="\##(level)" x1="\##(n(Self.left))" y1="\##(n(y(level)))" x2="\##(n(Self.left + plotWidth))" y2="\##(n(y(level)))" stroke="\##(level == 0 ? "#6b7685" : "#b8bfca")" stroke-width="1"/>"##
            )
            parts.append(
                ##"<text x="\##(n(Self.left - 8))" y="\##(n(y(level) + 4))" text-anchor="end" font-size="12" fill="#1b2733">\##(level)</text>"##
            )
        }
        parts.append(
            ##"<text x="\##(n(Self.left + plotWidth / 2))" y="\##(n(14))" text-anchor="middle" font-size="12" fill="#1b2733">\##(text("audiogram.axis.frequency").htmlEscaped)</text>"##
        )
        parts.append(
            ##"<text transform="translate(16 \##(n(Self.top + plotHeight / 2))) rotate(-90)" text-anchor="middle" font-size="12" fill="#1b2733">\##(text("audiogram.axis.level").htmlEscaped)</text>"##
        )
        return parts
    }

    private func marks(of measurement: Audiogram, measurement role: String) -> [String] {
        let faint = role == "earlier"
        var parts: [String] = []
        for ear in ears.shown {
            let color = Self.colors[ear]!
            let air = measurement.curve(ear, .air).filter { $0.thresholdDbHL != nil }
            if air.count > 1 {
                let line = air.map { "\(n(x($0.frequencyHz))),\(n(y($0.thresholdDbHL!)))" }.joined(separator: " ")
                let dash = ear == .left ? ##" stroke-dasharray="7 4""## : ""
                parts.append(
                    ##"<polyline class="curve" data-ear="\##(ear.rawValue)" data-measurement="\##(role)" points="\##(line)" fill="none" stroke="\##(color)" stroke-width="\##(faint ? "1.5" : "2")"\##(dash)\##(faint ? #" opacity="0.45""# : "")/>"##
                )
            }
            for point in measurement.points where point.ear == ear {
                parts.append(mark(point, color: color, role: role, faint: faint))
            }
        }
        return parts
    }

    private func mark(_ point: Audiogram.Point, color: String, role: String, faint: Bool) -> String {
        let level = point.thresholdDbHL ?? Self.levels.upperBound
        let threshold = point.thresholdDbHL.map(String.init) ?? "none"
        var shapes = [symbol(point)]
        if point.thresholdDbHL == nil {
            let direction = point.ear == .right ? -1.0 : 1.0
            shapes.append(
                ##"<path d="M \##(n(direction * 5)) 5 l \##(n(direction * 8)) 8 m \##(n(direction * -5)) 0 h \##(n(direction * 5)) v -5"/>"##
            )
        }
        let heard = point.thresholdDbHL.map { "\($0) dB HL" } ?? text("audiogram.no_response")
        let label =
            "\(text("audiogram.ear.\(point.ear.rawValue)")), \(point.frequencyHz) Hz, \(text("audiogram.conduction.\(point.conduction.rawValue)")): \(heard)"
        return
            ##"<g class="mark" data-measurement="\##(role)" data-ear="\##(point.ear.rawValue)" data-frequency="\##(point.frequencyHz)" data-threshold="\##(threshold)" data-conduction="\##(point.conduction.rawValue)" data-masked="\##(point.masked)" transform="translate(\##(n(x(point.frequencyHz))) \##(n(y(level))))" fill="none" stroke="\##(color)" stroke-width="2"\##(faint ? #" opacity="0.45""# : "")><title>\##(label.htmlEscaped)</title>\##(shapes.joined())</g>"##
    }

    /// The audiologists' symbol for a point, drawn around its centre.
    private func symbol(_ point: Audiogram.Point) -> String {
        switch (point.ear, point.conduction, point.masked) {
        case (.right, .air, false): ##"<circle r="6"/>"##
        case (.right, .air, true): ##"<path d="M 0 -7 L 6.5 5 L -6.5 5 Z"/>"##
        case (.left, .air, false): ##"<path d="M -5.5 -5.5 L 5.5 5.5 M -5.5 5.5 L 5.5 -5.5"/>"##
        case (.left, .air, true): ##"<rect x="-5.5" y="-5.5" width="11" height="11"/>"##
        case (.right, .bone, false): ##"<path d="M 4 -7 L -4 0 L 4 7"/>"##
        case (.right, .bone, true): ##"<path d="M 4 -7 H -2 V 7 H 4"/>"##
        case (.left, .bone, false): ##"<path d="M -4 -7 L 4 0 L -4 7"/>"##
        case (.left, .bone, true): ##"<path d="M -4 -7 H 2 V 7 H -4"/>"##
        }
    }

    private var legend: [String] {
        var parts: [String] = []
        var offset = Self.left
        let baseline = Self.height - 20
        for ear in ears.shown {
            let sample = symbol(Audiogram.Point(ear: ear, frequencyHz: 1000, thresholdDbHL: 0))
            parts.append(
                ##"<g class="legend-mark" transform="translate(\##(n(offset + 8)) \##(n(baseline - 4)))" fill="none" stroke="\##(Self.colors[ear]!)" stroke-width="2">\##(sample)</g>"##
            )
            parts.append(
                ##"<text x="\##(n(offset + 22))" y="\##(n(baseline))" font-size="12" fill="#1b2733">\##(text("audiogram.ear.\(ear.rawValue)").htmlEscaped)</text>"##
            )
            offset += narrow ? 110 : 130
        }
        if let earlier {
            let dates = text(
                "audiogram.legend.compared",
                ["date": display.date(audiogram.measuredAt), "earlier": display.date(earlier.measuredAt)])
            let (x, y) = narrow ? (Self.left, baseline + 16) : (offset, baseline)
            parts.append(
                ##"<text x="\##(n(x))" y="\##(n(y))" font-size="12" fill="#1b2733">\##(dates.htmlEscaped)</text>"##)
        }
        return parts
    }

    /// A 12 px text that would be wider than `width` (at about 7 px a character), split at the space nearest its
    /// middle.
    static func lines(_ text: String, fitting width: Double) -> [String] {
        guard Double(text.count) * 7 > width else { return [text] }
        let middle = text.count / 2
        let spaces = text.indices.filter { text[$0] == " " }
        guard
            let split = spaces.min(by: {
                abs(text.distance(from: text.startIndex, to: $0) - middle)
                    < abs(text.distance(from: text.startIndex, to: $1) - middle)
            })
        else { return [text] }
        return [String(text[..<split]), String(text[text.index(after: split)...])]
    }

    private func n(_ value: Double) -> String { value.plainText() }
}
