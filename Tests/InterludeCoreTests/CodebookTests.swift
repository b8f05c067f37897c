import Foundation
import Testing

@testable import InterludeCore

@Suite("Codebook: wide columns, the REDCap data dictionary and codebook.json")
struct CodebookTests {
    static let mood = InstrumentDefinition(
        key: "daily-mood", version: 2, title: "Daily mood",
        sections: [
            Section(
                id: "now", title: "Right now",
                options: [AnswerOption(code: "0", label: "Not at all"), AnswerOption(code: "1", label: "Very")],
                items: [
                    Item(id: "sad", type: .single, text: "Sad", required: true),
                    Item(id: "Calm Now", type: .single, text: "Calm"),
                ]),
            Section(
                id: "more",
                items: [
                    Item(id: "company", type: .boolean, text: "With others?"),
                    Item(
                        id: "who", type: .multiple, text: "Who?",
                        options: [
                            AnswerOption(code: "partner", label: "Partner"),
                            AnswerOption(code: "friends", label: "Friends, colleagues"),
                        ],
                        visibleWhen: Condition(.all, [Clause(item: "company", .equals, .bool(true))])),
                    Item(
                        id: "energy", type: .slider, text: "Energy", min: 0, max: 100, minLabel: "none",
                        maxLabel: "full"),
                    Item(id: "note", type: .text, text: "Anything else?", multiline: true),
                    Item(id: "thanks", type: .display, text: "Thank you"),
                ]),
        ],
        scores: [
            ScoreRule(
                id: "low", title: "Low mood", method: .sum, items: ["sad"],
                bands: [
                    Band(min: 0, max: 0, label: "None", level: "none"),
                    Band(min: 1, max: 1, label: "Some", level: "some"),
                ])
        ])

    static var moodV1: InstrumentDefinition {
        var old = mood
        old.version = 1
        old.sections[1].items.removeAll { $0.id == "note" }
        old.sections[1].items[0].text = "Alone?"
        return old
    }

    @Test("each form's variables: items by sanitised id, a column per option, then scores and bands")
    func variables() {
        // act
        let form = Codebook([Self.mood]).forms[0]

        // verify
        #expect(form.name == "daily_mood_v2")
        #expect(
            form.variables.map(\.name) == [
                "sad", "calm_now", "company", "who___partner", "who___friends", "energy", "note", "score_low",
                "score_low_band",
            ])
    }

    @Test("a name another form already uses is prefixed with the later form's name")
    func uniqueAcrossForms() {
        // act
        let codebook = Codebook([Self.mood, Self.moodV1])

        // verify
        #expect(codebook.forms.map(\.name) == ["daily_mood_v1", "daily_mood_v2"])
        #expect(codebook.forms[0].variables.first?.name == "sad")
        #expect(codebook.forms[1].variables.first?.name == "daily_mood_v2_sad")
        #expect(codebook.forms[1].itemNames["who"] == "daily_mood_v2_who")
        let all = codebook.forms.flatMap(\.variables).map(\.name)
        #expect(Set(all).count == all.count)
    }

    @Test("a response's wide row: codes, 1/0 for yes/no and per option, numbers with a dot, score and band")
    func wideValues() {
        // setup
        let form = Codebook([Self.mood]).forms[0]
        let answers: Answers = [
            "sad": .text("1"), "company": .bool(true), "who": .list(["friends"]), "energy": .number(62.5),
        ]

        // act
        let values = form.values(answers: answers, scores: Self.mood.scores(for: answers))

        // verify
        #expect(values == ["1", nil, "1", "0", "1", "62.5", nil, "1", "some"])
    }

    @Test("the REDCap dictionary reads back, form by form, into the same items, options and conditions")
    func redcapRoundTrip() throws {
        // setup
        let codebook = Codebook([Self.mood, Self.moodV1])
        let rows = CSV.parse(REDCapDictionary.csv(codebook))

        // verify: REDCap's header, record_id first
        #expect(rows[0] == REDCapDictionary.header)
        #expect(rows[1][0] == "record_id")
        for form in codebook.forms {
            // act
            let formRows = rows.dropFirst(2).filter { $0[1] == form.name && !$0[17].hasPrefix("@READONLY") }
            let imported = try REDCapImport.definition(
                fromCSV: ([rows[0]] + formRows).map { CSV.row($0, verbatim: REDCapDictionary.syntaxColumns) }.joined())

            // verify
            let original = form.definition.items.filter(\.type.takesAnswer)
            #expect(imported.items.map(\.id) == original.map { form.itemNames[$0.id]! })
            #expect(imported.items.map(\.type) == original.map(\.type))
            let who = try #require(imported.items.first { $0.id == form.itemNames["who"] })
            #expect(imported.options(of: who).map(\.code) == ["partner", "friends"])
            #expect(imported.options(of: who).map { $0.label.text(.en) } == ["Partner", "Friends, colleagues"])
            #expect(
                who.visibleWhen == Condition(.all, [Clause(item: form.itemNames["company"]!, .equals, .bool(true))]))
            #expect(imported.items.first { $0.id == form.itemNames["sad"] }?.required == true)
        }
    }

    @Test("codebook.json names each option's column and what changed from the previous version")
    func json() throws {
        // act
        let data = try Codebook([Self.mood, Self.moodV1]).json()
        let document = try JSONSerialization.jsonObject(with: data) as! [String: Any]

        // verify
        let forms = document["forms"] as! [[String: Any]]
        #expect(forms.map { $0["form"] as! String } == ["daily_mood_v1", "daily_mood_v2"])
        #expect(forms[0]["changesFromPrevious"] == nil)
        let changes = forms[1]["changesFromPrevious"] as! [String: Any]
        #expect(changes["previousVersion"] as? Int == 1)
        #expect(changes["added"] as? [String] == ["note"])
        #expect(changes["changed"] as? [String] == ["company"])
        #expect(changes["removed"] as? [String] == [])
        let who = (forms[1]["items"] as! [[String: Any]]).first { $0["id"] as? String == "who" }!
        #expect(
            (who["options"] as! [[String: Any]]).map { $0["column"] as! String } == [
                "daily_mood_v2_who___partner", "daily_mood_v2_who___friends",
            ])
    }
}
