import Foundation
import Testing

@testable import InterludeCore

@Suite("REDCap data dictionaries: every form, exact logic, nothing asked that the file keeps from participants")
struct REDCapImportTests {
    static let header =
        #"Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?,Custom Alignment,Question Number (surveys only),Matrix Group Name,Matrix Ranking?,Field Annotation"#

    static let recordID = "record_id,sleep_diary,,text,Record ID,,,,,,,,,,,,,"

    static let sleep =
        header + "\n" + recordID + "\n" + #"""
            slept_well,sleep_diary,,yesno,Did you sleep well?,,,,,,,,y,,,,,
            awake_reasons,sleep_diary,,checkbox,What kept you awake?,"1, Noise | 2, Worries | 3, Pain, mostly",,,,,,[slept_well] = '0',,,,,,
            worry_note,sleep_diary,,notes,<b>Describe</b> your worries,,,,,,,[awake_reasons(2)] = '1',,,,,,
            hours,sleep_diary,Details,text,Hours slept,,,number,0,24,,,y,,,,,
            rested,sleep_diary,,slider,How rested?,Not at all | | Fully,,,,,,,,,,,,
            mood_1,sleep_diary,,radio,Morning,"0, bad | 1, ok | 2, good",,,,,,,y,,,mood,,
            mood_2,sleep_diary,,radio,Evening,"0, bad | 1, ok | 2, good",,,,,,[hours] > 6 or [rested] < 20,y,,,mood,,
            """#

    /// The one instrument of `rows` (after the header and a record ID).
    static func form(_ rows: String) throws -> InstrumentDefinition {
        let result = try REDCapImport.instruments(fromCSV: header + "\n" + recordID + "\n" + rows)
        return try #require(result.instruments.first)
    }

    /// `place code detail` of every problem of `rows`, or nothing.
    static func problems(_ rows: String, budget: WorkBudget = .unlimited) -> [String] {
        do {
            _ = try REDCapImport.instruments(fromCSV: header + "\n" + recordID + "\n" + rows, budget: budget)
            return []
        } catch {
            return error.errors.map {
                [$0.field, $0.code.rawValue, $0.detail].compactMap { $0 }.joined(separator: " ")
            }
        }
    }

    @Test("a form imports with sections, matrix groups, choices and branching logic; the record ID is not asked")
    func sleepDiary() throws {
        let result = try REDCapImport.instruments(fromCSV: Self.sleep)
        let definition = try #require(result.instruments.first)
        #expect(result.instruments.count == 1)
        #expect(definition.key == "sleep-diary")
        #expect(definition.sections.count == 3)
        #expect(definition.sections[2].id == "mood")
        #expect(definition.sections[2].options?.count == 3)
        #expect(definition.items.map(\.type) == [.boolean, .multiple, .text, .number, .slider, .single, .single])
        #expect(definition.item("record_id") == nil)
        #expect(
            result.notes == [ImportNote(place: #"row 2 (field "record_id")"#, kind: .recordID, subject: "record_id")])
        #expect(definition.item("awake_reasons")?.options?.last?.label.text(.en) == "Pain, mostly")
        #expect(definition.item("worry_note")?.text.text(.en) == "Describe your worries")
        #expect(definition.item("rested")?.maxLabel?.text(.en) == "Fully")
        let logic = InstrumentLogic(definition)
        #expect(logic.visibility(["slept_well": .bool(false)]).items.contains("awake_reasons"))
        #expect(!logic.visibility(["slept_well": .bool(true)]).items.contains("awake_reasons"))
        #expect(
            logic.visibility(["slept_well": .bool(false), "awake_reasons": .list(["2"])]).items.contains("worry_note"))
        #expect(logic.visibility(["hours": .number(7)]).items.contains("mood_2"))
        #expect(!logic.visibility(["hours": .number(5), "rested": .number(50)]).items.contains("mood_2"))
    }

    @Test("carriage returns and line breaks around choices, as spreadsheets leave them, are no part of codes or labels")
    func lineBreaks() throws {
        let definition = try Self.form(
            "often,f,,radio,How often?,\"\r1, Never\r\n| 2, Sometimes\r|\r\n3,Often\r\",,,,,,,,,,,,\n"
                + "cr,f,,dropdown,Which?,\"\r\n\r1,\r\nOne\r\n\r|\r2,Two\r\",,,,,,,,,,,,\n"
                + "rested,f,,slider,How rested?,\"Not at all\r\n| |\r\nFully\r\",,,,,,,,,,,,")
        let often = try #require(definition.item("often"))
        #expect(often.options?.map(\.code) == ["1", "2", "3"])
        #expect(often.options?.map { $0.label.text(.en) } == ["Never", "Sometimes", "Often"])
        #expect(definition.item("cr")?.options?.map(\.code) == ["1", "2"])
        #expect(definition.item("cr")?.options?.map { $0.label.text(.en) } == ["One", "Two"])
        #expect(definition.item("rested")?.minLabel?.text(.en) == "Not at all")
        #expect(definition.item("rested")?.maxLabel?.text(.en) == "Fully")
        let fhir = definition.fhirQuestionnaire(canonicalURL: "https://example.org/q")
        let codes = fhir.item?.flatMap { $0.item ?? [] }.flatMap { $0.answerOption ?? [] }.compactMap(
            \.valueCoding?.code)
        #expect(codes?.allSatisfy { !$0.contains("\r") && !$0.contains("\n") } == true)
    }

    @Test("a dictionary of several forms imports one instrument per form, all or those chosen")
    func severalForms() throws {
        let text =
            Self.header + "\n" + #"""
                record_id,screening,,text,Record ID,,,,,,,,,,,,,
                age,screening,,text,Age,,,integer,18,99,,,y,,,,,
                smoker,screening,,yesno,Do you smoke?,,,,,,,,,,,,,
                cigarettes,habits,,text,Cigarettes a day,,,integer,0,100,,,,,,,,
                alcohol,habits,,radio,Alcohol,"0, Never | 1, Sometimes",,,,,,,,,,,,
                """#
        let all = try REDCapImport.instruments(fromCSV: text)
        #expect(all.instruments.map(\.key) == ["screening", "habits"])
        #expect(all.instruments.map { $0.items.map(\.id) } == [["age", "smoker"], ["cigarettes", "alcohol"]])
        #expect(all.instruments[1].title.text(.en) == "Habits")
        let chosen = try REDCapImport.instruments(fromCSV: text, forms: ["habits"])
        #expect(chosen.instruments.map(\.key) == ["habits"])
        #expect(throws: ValidationFailure([FieldError(field: "forms", code: .unknown, detail: "diary")])) {
            try REDCapImport.instruments(fromCSV: text, forms: ["habits", "diary"])
        }
    }

    @Test("logic on another form is refused naming the field, not read as something else")
    func otherForm() {
        let rows = #"""
            smoker,screening,,yesno,Do you smoke?,,,,,,,,,,,,,
            cigarettes,habits,,text,Cigarettes a day,,,integer,0,100,,[smoker] = '1',,,,,,
            """#
        #expect(Self.problems(rows) == [#"row 4 (field "cigarettes") otherForm smoker"#])
    }

    @Test("comparisons are read exactly, with at least, at most, parentheses and and binding closer than or")
    func operators() throws {
        let types = ["a": "radio", "b": "radio", "n": "text", "c": "checkbox"]
        func read(_ logic: String) throws -> Condition { try REDCapLogic.condition(logic, fieldTypes: types) }
        #expect(try read("[n] >= '2'") == Condition(.all, [Clause(item: "n", .atLeast, .number(2))]))
        #expect(try read("[n]<=3") == Condition(.all, [Clause(item: "n", .atMost, .number(3))]))
        #expect(try read("[a] >= '2'") == Condition(.all, [Clause(item: "a", .atLeast, .text("2"))]))
        #expect(try read("[n] != 4") == Condition(.all, [Clause(item: "n", .notEquals, .number(4))]))
        #expect(try read("[n] > -1.5") == Condition(.all, [Clause(item: "n", .greater, .number(-1.5))]))
        #expect(
            try read("[a] = '1' and [b] = '1' or [n] > 2")
                == Condition(
                    .any, [Clause(item: "n", .greater, .number(2))],
                    groups: [
                        Condition(
                            .all, [Clause(item: "a", .equals, .text("1")), Clause(item: "b", .equals, .text("1"))])
                    ]))
        #expect(
            try read("[a] = '1' AND ([b] = '1' OR ([n] >= 3))")
                == Condition(
                    .all, [Clause(item: "a", .equals, .text("1"))],
                    groups: [
                        Condition(
                            .any, [Clause(item: "b", .equals, .text("1")), Clause(item: "n", .atLeast, .number(3))])
                    ]))
        #expect(try read("(([a] = '1'))") == Condition(.all, [Clause(item: "a", .equals, .text("1"))]))
        #expect(
            try read("[c(2)] = '0'")
                == Condition(
                    .any, [Clause(item: "c", .answered, .bool(false)), Clause(item: "c", .notEquals, .text("2"))]))
        #expect(try read("[c(2)] <> '0'") == Condition(.all, [Clause(item: "c", .equals, .text("2"))]))
        for unsupported in [
            "[a] =", "", "([a] = '1'", "[a] = '1')", "datediff([d], 'today', 'd') > 3", "[a] = [b]", "[a] >= ''",
            "[c] = '1'", "[a] = '1' xor [b] = '2'", "if([a] = 1, 1, 0) = 1",
            String(repeating: "(", count: 9) + "[a] = '1'" + String(repeating: ")", count: 9),
        ] {
            #expect(throws: REDCapLogic.Failure.unsupported, "\(unsupported)") { try read(unsupported) }
        }
        for longitudinal in [
            "[visit_1_arm_1][a] = '1'", "[event-name] = 'visit_1_arm_1'", "[previous-event-name][a] = '1'",
        ] {
            #expect(throws: REDCapLogic.Failure.longitudinal, "\(longitudinal)") { try read(longitudinal) }
        }
    }

    @Test("follow-up questions show exactly where the logic says: at least 2, not 1")
    func atLeastShows() throws {
        let definition = try Self.form(
            #"""
            worry,f,,radio,How much do you worry?,"0, Not | 1, A little | 2, Much | 3, Very much",,,,,,,,,,,,
            why,f,,notes,What worries you?,,,,,,,[worry] >= '2' and ([worry] <= '2' or [worry] = '3'),,,,,,
            """#)
        let logic = InstrumentLogic(definition)
        #expect(!logic.visibility(["worry": .text("1")]).items.contains("why"))
        #expect(logic.visibility(["worry": .text("2")]).items.contains("why"))
        #expect(logic.visibility(["worry": .text("3")]).items.contains("why"))
        #expect(definition.problems() == [])
    }

    @Test("problems name their row and field and quote what Interlude cannot read")
    func refusals() {
        #expect(
            Self.problems("pic,f,,file,Your photo,,,,,,,,,,,,,") == [#"row 3 (field "pic") unsupportedFieldType file"#])
        #expect(Self.problems("a,f,,radio,Pick,no choices here,,,,,,,,,,,,") == [#"row 3 (field "a") choicesFormat"#])
        #expect(
            Self.problems("a,f,,yesno,A,,,,,,,,,,,,,\nb,f,,text,B,,,,,,,[visit_1_arm_1][a] = '1',,,,,,") == [
                #"row 4 (field "b") longitudinalLogic [visit_1_arm_1][a] = '1'"#
            ])
        #expect(
            Self.problems("a,f,,yesno,A,,,,,,,,,,,,,\nb,f,,text,B,,,,,,,datediff([a]) > 1,,,,,,") == [
                #"row 4 (field "b") unsupportedLogic datediff([a]) > 1"#
            ])
        #expect(
            Self.problems("b,f,,text,B,,,,,,,[nowhere] = '1',,,,,,") == [#"row 3 (field "b") unknownField nowhere"#])
        #expect(
            Self.problems("h,f,,text,H,,,,,,,,,,,,,@HIDDEN\nb,f,,text,B,,,,,,,[h] = '1',,,,,,") == [
                #"row 4 (field "b") notAsked h"#
            ])
        #expect(
            Self.problems(
                "m1,f,,radio,A,\"0, no | 1, yes\",,,,,,,,,,m,,\nm2,f,,radio,B,\"0, no | 2, yes\",,,,,,,,,,m,,")
                == [#"row 4 (field "m2") mismatch"#])
        #expect(throws: ValidationFailure(field: "csv.header", code: .invalidFormat)) {
            try REDCapImport.instruments(fromCSV: "just,some,columns\n1,2,3")
        }
    }

    @Test("@HIDDEN, hidden-in-survey and read-only fields are never asked, and the import says so")
    func hidden() throws {
        let result = try REDCapImport.instruments(
            fromCSV: Self.header + "\n" + Self.recordID + "\n"
                + "consent_date,sleep_diary,,text,Consent date,,,date_ymd,,,,,,,,,,\"@HIDDEN @DEFAULT='[survey-date-completed]'\"\n"
                + "site,sleep_diary,,text,Site,,,,,,,,,,,,,@HIDDEN-SURVEY\n"
                + "staff_only,sleep_diary,,text,Staff note,,,,,,,,,,,,,@HIDDEN-FORM\n"
                + "stamp,sleep_diary,,text,Stamp,,,,,,,,,,,,,@READONLY\n")
        let definition = try #require(result.instruments.first)
        #expect(definition.items.map(\.id) == ["staff_only"])
        #expect(result.notes.map(\.kind) == [.recordID, .hidden, .hidden, .readOnly])
        #expect(result.notes.map(\.subject) == ["record_id", "consent_date", "site", "stamp"])
    }

    @Test(
        "calculated sums and means become scores, computed as REDCap would; other calculations are noted and left out")
    func calculations() throws {
        let result = try REDCapImport.instruments(
            fromCSV: Self.header + "\n" + Self.recordID + "\n" + #"""
                e1,sleep_diary,,radio,First,"0, no | 1, some | 2, much | 3, very",,,,,,,,,,,,
                e2,sleep_diary,,radio,Second,"0, no | 1, some | 2, much | 3, very",,,,,,,,,,,,
                e3,sleep_diary,,radio,Third,"0, no | 1, some | 2, much | 3, very",,,,,,,,,,,,
                total,sleep_diary,,calc,Total score,"sum([e1],[e2],[e3])",,,,,,,,,,,,
                average,sleep_diary,,calc,Average,"mean([e1], [e2])",,,,,,,,,,,,
                plus,sleep_diary,,calc,Plus,[e1] + [e3],,,,,,,,,,,,
                bmi,sleep_diary,,calc,BMI,"round([e1]*10000/([e2]*[e2]),1)",,,,,,,,,,,,
                """#)
        let definition = try #require(result.instruments.first)
        #expect(definition.items.map(\.id) == ["e1", "e2", "e3"])
        #expect(definition.scores.map(\.id) == ["total", "average", "plus"])
        #expect(definition.scores.map(\.method) == [.sum, .mean, .sum])
        #expect(definition.scores[0].items == ["e1", "e2", "e3"])
        #expect(definition.scores[0].title.text(.en) == "Total score")
        let scores = definition.scores(for: ["e1": .text("3"), "e2": .text("2"), "e3": .text("0")])
        #expect(scores.map(\.value) == [5, 2.5, 3])
        #expect(
            result.notes.filter { $0.kind != .recordID }.map { "\($0.subject) \($0.kind.rawValue)" } == [
                "total calculationAsScore", "average calculationAsScore", "plus calculationAsScore",
                "bmi calculationLeftOut",
            ])
    }

    @Test("every validation type becomes the closest item type with its bounds and decimals")
    func validationTypes() throws {
        let definition = try Self.form(
            #"""
            whole,f,,text,Whole,,,integer,1,10,,,,,,,,
            three,f,,text,Three places,,,number_3dp,,,,,,,,,,
            four,f,,text,Four places,,,number_4dp,,,,,,,,,,
            comma,f,,text,Comma,,,number_2dp_comma_decimal,"1,5","9,75",,,,,,,,
            plain_comma,f,,text,Plain comma,,,number_comma_decimal,,,,,,,,,,
            born,f,,text,Born,,,date_dmy,1920-01-01,2010-12-31,,,,,,,,
            seen,f,,text,Seen,,,datetime_seconds_ymd,2026-01-01 00:00:00,today,,,,,,,,
            clock,f,,text,Clock,,,time,,,,,,,,,,
            precise,f,,text,Precise,,,time_hh_mm_ss,,,,,,,,,,
            walk,f,,text,Walking time,,,time_mm_ss,,,,,,,,,,
            mail,f,,text,Email,,,email,,,,,,,,,,
            """#)
        func item(_ id: String) throws -> Item { try #require(definition.item(id)) }
        #expect(try item("whole").type == .number && item("whole").decimals == 0 && item("whole").min == 1)
        #expect(try item("three").decimals == 3 && item("four").decimals == 4)
        #expect(try item("comma").decimals == 2 && item("comma").min == 1.5 && item("comma").max == 9.75)
        #expect(try item("plain_comma").type == .number && item("plain_comma").decimals == nil)
        #expect(
            try item("born").type == .date && item("born").earliest == "1920-01-01"
                && item("born").latest == "2010-12-31")
        #expect(
            try item("seen").type == .dateTime && item("seen").earliest == "2026-01-01" && item("seen").latest == nil)
        #expect(try item("clock").type == .time && item("precise").type == .time && item("precise").step == 1)
        #expect(try item("walk").type == .text && item("walk").format == .minutesSeconds)
        #expect(try item("mail").type == .text)
        #expect(definition.problems() == [])
        #expect(definition.problems(in: ["walk": .text("6:30"), "three": .number(1.125)]) == [])
        #expect(definition.problems(in: ["walk": .text("6:75")]).map(\.code) == [.invalidFormat])
        #expect(definition.problems(in: ["three": .number(1.1255)]).map(\.code) == [.invalidFormat])
        #expect(definition.problems(in: ["born": .text("2011-01-01")]).map(\.code) == [.outOfRange])
        #expect(definition.problems(in: ["born": .text("1919-12-31")]).map(\.code) == [.outOfRange])
        #expect(definition.problems(in: ["born": .text("2010-12-31"), "precise": .text("07:30:15")]) == [])
    }

    @Test("'answer, or tick don't know' pairs show each while the other is empty")
    func dontKnowPairs() throws {
        let definition = try Self.form(
            #"""
            weight,f,,text,Your weight,,,integer,20,300,,[weight_dk(1)] <> '1',,,,,,
            weight_dk,f,,checkbox,,"1, I don't know",,,,,,[weight] = '',,,,,,
            """#)
        #expect(definition.problems() == [])
        let logic = InstrumentLogic(definition)
        #expect(logic.visibility([:]).items == ["weight", "weight_dk"])
        #expect(logic.visibility(["weight": .number(70)]).items == ["weight"])
        #expect(logic.visibility(["weight_dk": .list(["1"])]).items == ["weight_dk"])
        #expect(definition.problems(in: ["weight": .number(70), "weight_dk": .list(["1"])]).count == 1)
    }

    @Test("branching logic is read in one pass: any spacing, joiners inside quotes, a thousand joiners")
    func branchingRead() throws {
        let types = ["a": "radio", "b": "radio", "n": "text"]
        let spaced = "[a] = '1'" + String(repeating: " ", count: 32_000) + "and   [b] = '2'"
        #expect(
            try REDCapLogic.condition(spaced, fieldTypes: types)
                == Condition(.all, [Clause(item: "a", .equals, .text("1")), Clause(item: "b", .equals, .text("2"))]))
        #expect(
            try REDCapLogic.condition("[a] = 'salt and pepper' OR [b] <> ''", fieldTypes: types)
                == Condition(
                    .any,
                    [Clause(item: "a", .equals, .text("salt and pepper")), Clause(item: "b", .answered, .bool(true))]))
        #expect(throws: REDCapLogic.Failure.unsupported) {
            try REDCapLogic.condition("[a]" + String(repeating: " ", count: 32_000) + "x", fieldTypes: types)
        }
        let many = Array(repeating: "[n] > 1", count: 1000).joined(separator: " or ")
        #expect(try REDCapLogic.condition(many, fieldTypes: types).clauses.count == 1000)
    }

    @Test("tags leave labels in one pass; a lone '<' stays")
    func tagsRemoved() {
        #expect(REDCapText.plain("<b>Describe</b> your <span style='x'>worries</span>") == "Describe your worries")
        #expect(REDCapText.plain("Fewer than 3 <i>days</i>: pick < 3") == "Fewer than 3 days: pick < 3")
        #expect(REDCapText.plain(String(repeating: "<", count: 50_000)) == String(repeating: "<", count: 50_000))
    }

    @Test("a cell, a branching logic or a file beyond its cap is refused by place; a spent budget refuses the file")
    func capsAndBudget() throws {
        let long = String(repeating: "x", count: REDCapImport.maxCellLength + 1)
        #expect(Self.problems("a,f,,text,\(long),,,,,,,,,,,,,") == [#"row 3 (field "a") tooLong"#])
        let logic = Array(repeating: "[a] = '1'", count: 300).joined(separator: " and ")
        #expect(
            Self.problems("a,f,,yesno,A,,,,,,,,,,,,,\nb,f,,text,B,,,,,,,\(logic),,,,,,") == [
                #"row 4 (field "b") tooLong"#
            ])
        let rows = (0...REDCapImport.maxRows).map { "v\($0),f,,text,V,,,,,,,,,,,,," }.joined(separator: "\n")
        #expect(Self.problems(rows) == ["csv tooLong"])
        #expect(Self.problems("a,f,,text,A,,,,,,,,,,,,,", budget: WorkBudget(.zero)) == ["csv tooComplex"])
        #expect(Self.problems("a,f,,text,A,,,,,,,,,,,,,", budget: WorkBudget(.seconds(60))) == [])
    }
}
