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

    @Test(
        "codebook.csv imports back as it is: one instrument per form with the same sections, items, options, conditions and plain scores"
    )
    func redcapRoundTrip() throws {
        // setup
        let codebook = Codebook([Self.mood, Self.moodV1])
        let csv = REDCapDictionary.csv(codebook)
        let rows = CSV.parse(csv)
        #expect(rows[0] == REDCapDictionary.header)
        #expect(rows[1][0] == "record_id")

        // act
        let imported = try REDCapImport.instruments(fromCSV: csv)

        // verify
        #expect(imported.instruments.count == codebook.forms.count)
        for (form, definition) in zip(codebook.forms, imported.instruments) {
            #expect(definition.key == "daily-mood")
            let original = form.definition
            #expect(definition.sections.count == original.sections.count)
            // A matrix group's name is unique in the project: the later form's is prefixed, as its variables are.
            #expect(definition.sections[0].id == (form.name == "daily_mood_v1" ? "now" : "daily_mood_v2_now"))
            #expect(definition.sections[0].title?.text(.en) == "Right now")
            #expect(definition.sections[0].options == original.sections[0].options)
            let asked = original.items.filter(\.type.takesAnswer)
            #expect(definition.items.map(\.id) == asked.map { form.itemNames[$0.id]! })
            #expect(definition.items.map(\.type) == asked.map(\.type))
            #expect(definition.items.map { $0.text.text(.en) } == asked.map { $0.text.text(.en) })
            #expect(definition.items.map(\.required) == asked.map(\.required))
            let who = try #require(definition.items.first { $0.id == form.itemNames["who"] })
            #expect(definition.options(of: who) == original.options(of: try #require(original.item("who"))))
            #expect(
                who.visibleWhen == Condition(.all, [Clause(item: form.itemNames["company"]!, .equals, .bool(true))]))
            let energy = try #require(definition.items.first { $0.id == form.itemNames["energy"] })
            #expect(energy.min == 0 && energy.max == 100 && energy.maxLabel?.text(.en) == "full")
            let score = try #require(definition.scores.first)
            #expect(score.method == .sum && score.items == [form.itemNames["sad"]!])
            #expect(definition.problems() == [])
        }
        #expect(
            imported.notes.map(\.kind) == [.recordID, .calculationAsScore, .readOnly, .calculationAsScore, .readOnly])
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
