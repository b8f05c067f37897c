"""A study's new consent version in the patient app: joining with the optional parts chosen one by one, the
notice that a re-consent version waits, the differences shown, and the answer that settles it.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import unittest
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, patient_token, staff_token


class ConsentTest(BrowserTestCase):
    def test_a_new_consent_version_is_put_to_the_participant_and_answered_in_the_app(self):
        driver = self.driver
        suffix = uuid.uuid4().hex[:8]
        researcher = staff_token(f"consent-researcher-{suffix}@uni.example", "researcher", "a long enough password")
        study = call("POST", "/studies", {
            "title": f"Noise and mood {suffix}", "consentText": "I take part.", "consentVersion": "1", "joinMode": "open",
        }, token=researcher)
        call("POST", f"/studies/{study['id']}/consent-versions", {
            "version": "2", "texts": {"en": "I take part.\nMy answers are stored under a code."}, "modules": ["context"],
        }, token=researcher)
        address = f"consent-patient-{suffix}@example.org"
        patient = patient_token(address, "a long enough password")

        self.app_sign_in(address, "a long enough password")
        self.open("/app/studies")
        card_module = f"#study-{study['id']}-module-context"
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, card_module)))
        self.assertFalse(driver.find_element(By.CSS_SELECTOR, card_module).is_selected(), "nothing optional is chosen for the person")
        self.click(f"label[for=study-{study['id']}-accept]")
        self.click(f"label[for=study-{study['id']}-module-context]")
        join = driver.execute_script(
            "return document.getElementById(arguments[0]).form.querySelector('button[type=submit]')", f"study-{study['id']}-accept")
        self.tap(join)
        self.wait.until(lambda driver: call("GET", "/me/consents", token=patient)["history"][0].get("studyId") == study["id"])
        joined = next(entry for entry in call("GET", "/me/consents", token=patient)["history"] if entry.get("studyId") == study["id"])
        self.assertEqual(joined["modules"], {"participation": True, "context": True})
        self.assertEqual(joined["method"], "joining")

        call("POST", f"/studies/{study['id']}/consent-versions", {
            "version": "3", "texts": {"en": "I take part.\nMy answers are stored under a code.\nThe study ends in June."},
            "modules": ["context"], "reconsentRequired": True,
        }, token=researcher)
        self.open("/app")
        self.wait.until(EC.visibility_of_element_located((By.ID, "consent-needed")))
        self.click("#consent-needed a")
        self.wait_for_path("/app/consents")
        card = f"section[data-document='{study['id']}']"
        self.wait_for_text(f"{card} .consent-changes", "The study ends in June.")
        self.assertTrue(driver.find_element(By.CSS_SELECTOR, f"{card} #consent-{study['id']}-module-context").is_selected(),
                        "the earlier choice is kept as the starting point")
        self.click(f"label[for=consent-{study['id']}-module-context]")
        self.click(f"{card} button[type=submit]")
        self.wait_for_text("#consents-status", "Your decision is saved.")

        consents = call("GET", "/me/consents", token=patient)
        state = next(document for document in consents["documents"] if document.get("studyId") == study["id"])
        self.assertFalse(state["mustAnswer"])
        self.assertEqual(state["decision"]["version"], "3")
        self.assertEqual(state["decision"]["modules"], {"participation": True, "context": False})
        self.open("/app")
        self.wait.until(EC.presence_of_element_located((By.ID, "consent-needed")))
        self.assertFalse(driver.find_element(By.ID, "consent-needed").is_displayed())

    def test_a_german_reader_sees_the_study_in_german_and_what_is_only_in_english_marked(self):
        driver = self.driver
        suffix = uuid.uuid4().hex[:8]
        researcher = staff_token(f"german-researcher-{suffix}@uni.example", "researcher", "a long enough password")
        study = call("POST", "/studies", {
            "titles": {"en": f"Sleep and mood {suffix}", "de": f"Schlaf und Stimmung {suffix}"},
            "description": "A few questions each evening.",
            "consentTexts": {"en": "I take part.", "de": "Ich nehme teil.\n\nMeine Antworten bleiben unter einem Code."},
            "consentVersion": "1", "joinMode": "open",
        }, token=researcher)
        address = f"german-patient-{suffix}@example.org"
        patient_token(address, "a long enough password", locale="de")

        driver.set_window_size(360, 740)
        driver.delete_all_cookies()
        self.open("/app/login")
        driver.add_cookie({"name": "lang", "value": "de", "path": "/"})
        self.app_sign_in(address, "a long enough password")
        self.open("/app/studies")
        card = f"#study-{study['id']}-accept"
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, card)))
        section = driver.execute_script("return document.getElementById(arguments[0]).closest('section.card')", f"study-{study['id']}-accept")
        heading = section.find_element(By.CSS_SELECTOR, "h2")
        self.assertEqual(heading.text, f"Schlaf und Stimmung {suffix}")
        self.assertFalse(heading.get_attribute("lang"), "the person's own language is not marked")
        description = section.find_element(By.CSS_SELECTOR, "h2 + p")
        self.assertEqual(description.get_attribute("lang"), "en", "screen readers read the English text as English")
        self.assertEqual(description.text, "A few questions each evening. (auf Englisch)")
        paragraphs = [p.text for p in section.find_elements(By.CSS_SELECTOR, ".consent p")]
        self.assertEqual(paragraphs, ["Ich nehme teil.", "Meine Antworten bleiben unter einem Code."])
        self.assertFalse(driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth"), "nothing scrolls sideways")


if __name__ == "__main__":
    unittest.main()
