"""The questionnaire editor in a real browser: a study leader builds a questionnaire from nothing (a choice, a
slider shown only after a certain choice, a score with a band, both languages), answers it in the preview as the
app shows it, saves it as a draft checked by the server, publishes it, and edits it again into a second version;
a definition the server refuses is named and kept in the editor.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import json
import unittest
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from browser_support import BrowserTestCase
from interlude_e2e import call, staff_token

PASSWORD = "a long enough password"


class InstrumentEditorTest(BrowserTestCase):
    def field(self, name):
        return self.wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, f"#editor [data-field='{name}']")))

    def type_into(self, name, text):
        element = self.field(name)
        element.clear()
        element.send_keys(text)

    def action(self, name):
        self.click(f"#editor [data-action='{name}']")

    def definition(self):
        return json.loads(self.driver.find_element(By.ID, "definition").get_attribute("value"))

    def wait_for_current_preview(self, text):
        """Waits until the preview shows the definition as it is now (no change still on its way to it)."""
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#preview-status[data-current='true']")))
        self.wait_for_text("#preview-status", text)

    def in_preview(self, check):
        """Runs `check` inside the preview frame once it shows the questionnaire, then comes back."""
        self.wait.until(EC.frame_to_be_available_and_switch_to_it((By.ID, "preview")))
        try:
            return check()
        finally:
            self.driver.switch_to.default_content()

    def test_build_preview_save_publish_and_edit_again(self):
        driver = self.driver
        suffix = uuid.uuid4().hex[:8]
        address = f"editor-{suffix}@uni.example"
        token = staff_token(address, "researcher", PASSWORD)
        call("POST", "/studies", {"title": f"Sleep {suffix}", "consentText": "I take part.", "consentVersion": "1", "joinMode": "open"},
             token=token)
        key = f"sleep-{suffix}"

        self.console_sign_in(address, PASSWORD)
        self.wait_for_path("/console/studies")
        self.open("/console/instruments")
        self.click("#create-in-editor")
        self.wait_for_path("/console/instruments/editor")

        # About the questionnaire, in both languages.
        self.type_into("key", key)
        self.type_into("title.en", "Sleep check")
        self.type_into("title.de", "Schlafcheck")
        # A choice with two options.
        self.action("sections.0.addItem")
        self.type_into("sections.0.items.0.id", "slept")
        self.type_into("sections.0.items.0.text.en", "Did you sleep well?")
        self.type_into("sections.0.items.0.text.de", "Haben Sie gut geschlafen?")
        for index, (code, english, german) in enumerate([("0", "No", "Nein"), ("1", "Yes", "Ja")]):
            self.action("sections.0.items.0.addOption")
            self.type_into(f"sections.0.items.0.options.{index}.code", code)
            self.type_into(f"sections.0.items.0.options.{index}.label.en", english)
            self.type_into(f"sections.0.items.0.options.{index}.label.de", german)
        # A slider 0–10, shown only after "Yes".
        self.action("sections.0.addItem")
        self.type_into("sections.0.items.1.id", "hours")
        Select(self.field("sections.0.items.1.type")).select_by_value("slider")
        self.type_into("sections.0.items.1.text.en", "How rested do you feel?")
        self.type_into("sections.0.items.1.text.de", "Wie erholt fühlen Sie sich?")
        self.type_into("sections.0.items.1.min", "0")
        self.type_into("sections.0.items.1.max", "10")
        self.action("sections.0.items.1.addCondition")
        condition = driver.find_elements(By.CSS_SELECTOR, "[data-editor-item=hours] .editor-condition select")
        Select(condition[1]).select_by_value("slept")
        Select(condition[2]).select_by_value("equals")
        value = driver.find_element(By.CSS_SELECTOR, "[data-editor-item=hours] .editor-condition input")
        value.clear()
        value.send_keys("1")
        # A score of both with one band.
        self.action("addScore")
        self.type_into("scores.0.title.en", "Sleep")
        self.type_into("scores.0.title.de", "Schlaf")
        self.click("#editor [data-field='items:slept']")
        self.click("#editor [data-field='items:hours']")
        self.action("scores.0.addBand")
        self.type_into("scores.0.bands.0.min", "0")
        self.type_into("scores.0.bands.0.max", "11")
        self.type_into("scores.0.bands.0.label.en", "Any")
        self.type_into("scores.0.bands.0.label.de", "Alle")

        built = self.definition()
        self.assertEqual([item["id"] for item in built["sections"][0]["items"]], ["slept", "hours"])
        self.assertEqual(built["sections"][0]["items"][1]["visibleWhen"],
                         {"mode": "all", "clauses": [{"item": "slept", "operator": "equals", "value": "1"}]})

        # The preview answers it as the app would: the slider appears after "Yes", the result is scored, nothing is sent.
        self.wait_for_current_preview("2 questions")

        def answer():
            self.wait_for_text("#questionnaire-title", "Sleep check")
            hours = driver.find_element(By.CSS_SELECTOR, "[data-item=hours]")
            self.assertFalse(hours.is_displayed(), "hidden until the choice says yes")
            choice = driver.find_element(By.CSS_SELECTOR, "[data-item=slept] input[value='1']")
            self.tap(driver.find_element(By.CSS_SELECTOR, f"label[for='{choice.get_attribute('id')}']"))
            self.wait.until(lambda _: hours.is_displayed())
        self.in_preview(answer)

        # Saved: the server checked it and keeps it as a draft, exactly as built.
        self.click("#save")
        self.wait.until(lambda d: f"/console/instruments/{key}/1" in d.current_url)
        self.wait_for_text("main", "Publish")
        stored = call("GET", f"/instruments/{key}/versions/1", token=token)
        self.assertEqual(stored["sections"], built["sections"])
        self.assertEqual(stored["scores"][0]["items"], ["slept", "hours"])
        self.assertEqual(stored["title"], {"en": "Sleep check", "de": "Schlafcheck"})

        # Published, then edited again: the editor starts from the stored version, and saving makes version 2.
        self.click("form[action$='/publication'] button[type=submit]")
        self.wait_for_text("main", "Published")
        self.click("#edit-in-editor")
        self.wait_for_path("/console/instruments/editor")
        reopened = self.definition()
        self.assertEqual(reopened["sections"], stored["sections"])
        self.wait_for_current_preview("2 questions")
        self.in_preview(lambda: self.wait_for_text("#questionnaire-title", "Sleep check"))
        self.type_into("title.en", "Sleep check, second version")
        self.click("#save")
        self.wait.until(lambda d: f"/console/instruments/{key}/2" in d.current_url)
        self.assertEqual(call("GET", f"/instruments/{key}/versions/2", token=token)["title"]["en"], "Sleep check, second version")

        # A definition the server refuses is named, and the editor keeps what was built.
        self.click("#edit-in-editor")
        self.wait_for_path("/console/instruments/editor")
        self.type_into("sections.0.items.1.max", "-5")
        self.click("#save")
        self.wait.until(EC.visibility_of_element_located((By.ID, "editor-errors")))
        self.assertEqual(self.definition()["sections"][0]["items"][1]["max"], -5)
        versions = [item["version"] for item in call("GET", "/instruments", token=token) if item["key"] == key]
        self.assertEqual(versions, [2], "nothing new was stored")

    def test_library_questionnaires_round_trip_through_the_editor_and_its_preview(self):
        """Every part of a definition the editor does not touch comes back unchanged, and the preview shows all of it."""
        suffix = uuid.uuid4().hex[:8]
        address = f"editor-library-{suffix}@uni.example"
        token = staff_token(address, "researcher", PASSWORD)
        call("POST", "/studies", {"title": f"Library {suffix}", "consentText": "I take part.", "consentVersion": "1", "joinMode": "open"},
             token=token)
        self.console_sign_in(address, PASSWORD)
        self.wait_for_path("/console/studies")
        for key, version in (("phq-9", 1), ("tys-baseline", 2), ("tys-daily", 2)):
            stored = call("GET", f"/instruments/{key}/versions/{version}", token=token)
            self.open(f"/console/instruments/editor?key={key}&version={version}")
            count = sum(len(section["items"]) for section in stored["sections"])
            self.wait_for_current_preview(f"{count} questions")
            self.assertEqual(self.definition(), stored, key)


if __name__ == "__main__":
    unittest.main()
