"""A questionnaire from the field in a real browser: an administrator imports a FHIR Questionnaire with an
open-choice question, a minutes:seconds duration and an "answer, or tick don't know" pair; the patient answers it on
a phone-sized screen in their own words, the pair showing each question while the other is empty; the answers
arrive as given, with the time spent on each.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import json
import os
import sqlite3
import unittest
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import API, call, iso, pair, patient_token, staff_token

QUESTIONNAIRE = {
    "resourceType": "Questionnaire", "url": "http://example.org/Questionnaire/errands", "name": "Errands",
    "title": "Errands", "status": "draft",
    "item": [
        {"linkId": "where", "type": "open-choice", "text": "Where did you go?", "required": True,
         "answerOption": [{"valueCoding": {"code": "shop", "display": "To the shop"}},
                          {"valueCoding": {"code": "work", "display": "To work"}}]},
        {"linkId": "walk", "type": "string", "text": "How long did the walk take?",
         "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/regex", "valueString": "^[0-9]{1,3}:[0-5][0-9]$"}]},
        {"linkId": "weight", "type": "decimal", "text": "How heavy was the bag (kg)?", "required": True,
         "enableWhen": [{"question": "weight-dk", "operator": "exists", "answerBoolean": False}]},
        {"linkId": "weight-dk", "type": "choice", "repeats": True, "text": "Or",
         "answerOption": [{"valueCoding": {"code": "dk", "display": "I don't know"}}],
         "enableWhen": [{"question": "weight", "operator": "exists", "answerBoolean": False}]},
    ],
}


class ImportedQuestionnaireTest(BrowserTestCase):
    def test_own_words_duration_and_dont_know(self):
        driver = self.driver
        admin = staff_token("errands-admin@example.org", "admin", "errands passphrase 1")
        therapist = staff_token("errands-therapist@example.org", "therapist", "errands passphrase 2")
        request = urllib.request.Request(API + "/instruments?publish=true", method="POST",
                                         data=json.dumps(QUESTIONNAIRE).encode(),
                                         headers={"Authorization": "Bearer " + admin,
                                                  "Content-Type": "application/fhir+json"})
        with urllib.request.urlopen(request) as response:
            self.assertEqual(response.status, 201)
        patient = patient_token("errands@example.org", "errands passphrase 3")
        patient_id = pair(patient, therapist)
        prompt = call("POST", f"/patients/{patient_id}/prompts",
                      {"instrumentKey": "errands", "opensAt": iso(-1), "closesAt": iso(60)}, token=therapist)

        self.app_sign_in("errands@example.org", "errands passphrase 3")
        self.open(f"/app/questionnaires/{prompt['id']}")
        self.wait.until(EC.visibility_of_element_located((By.ID, "item-where-other")))

        # Both of the pair show while neither is answered; a weight hides "don't know", and back.
        self.assertTrue(driver.find_element(By.CSS_SELECTOR, "[data-item=weight]").is_displayed())
        self.assertTrue(driver.find_element(By.CSS_SELECTOR, "[data-item=weight-dk]").is_displayed())
        self.fill("item-weight", "4.5")
        self.wait.until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "[data-item=weight-dk]")))
        driver.find_element(By.ID, "item-weight").send_keys(Keys.BACK_SPACE * 3)
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-item=weight-dk]")))
        self.click("[data-item=weight-dk] label[for=item-weight-dk-0]")
        self.wait.until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "[data-item=weight]")))

        # An option first, then the person's own words in its place.
        self.click("[data-item=where] label[for=item-where-0]")
        self.fill("item-where-other", "To my sister's")
        self.assertFalse(driver.find_element(By.ID, "item-where-0").is_selected())
        walk = driver.find_element(By.ID, "item-walk")
        self.assertEqual(walk.get_attribute("inputmode"), "numeric")
        self.assertTrue(walk.get_attribute("placeholder"))
        self.fill("item-walk", "6:30")
        driver.save_screenshot(self.artefact("imported-questionnaire.png"))
        self.assertLessEqual(driver.execute_script("return document.documentElement.scrollWidth"),
                             driver.execute_script("return window.innerWidth"), "nothing scrolls sideways")

        self.wait.until(EC.element_to_be_clickable((By.ID, "submit")))
        self.click("#submit")
        self.wait.until(EC.visibility_of_element_located((By.ID, "confirm")))
        self.click("#confirm-yes")
        self.wait_for_text("#questionnaire-status", "submitted")

        responses = call("GET", f"/patients/{patient_id}/responses", token=therapist)
        answers = responses[0]["answers"]
        self.assertEqual(answers, {"where": "To my sister's", "walk": "6:30", "weight-dk": ["dk"]})

        # The time spent on each answered item went with the answers (a question being read takes a moment).
        path = os.path.join(os.environ["INTERLUDE_DATA_DIR"], "interlude.sqlite")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as database:
            stored = database.execute(
                "SELECT item_times FROM responses WHERE item_times LIKE '%\"weight-dk\"%'").fetchall()
        self.assertEqual(len(stored), 1)
        times = json.loads(stored[0][0])
        self.assertEqual(set(times), {"where", "walk", "weight-dk"})
        self.assertTrue(all(0 < seconds < 600 for seconds in times.values()), times)


if __name__ == "__main__":
    unittest.main()
