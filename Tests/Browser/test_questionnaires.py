"""Questionnaires in a real browser: a therapist assigns the Intersession-Daily in the console; the patient fills it
in on a phone-sized screen — answering "no" hides the second section and allows submitting, "yes" shows it and
requires it — answers survive a reload, the submission needs a confirmation and leaves the questionnaire
read-only; the therapist then sees the scores as a chart and the answers in order.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from browser_support import BrowserTestCase
from interlude_e2e import call, iso, link_in_outbox, pair, staff_token


class QuestionnaireTest(BrowserTestCase):
    def sign_in_patient(self, address, password):
        self.open("/app/login")
        self.fill("email", address)
        self.fill("password", password)
        self.click("form[data-form=login] button[type=submit]")
        self.wait_for_path("/app")

    def answer_yes_no(self, value):
        self.click(f"[data-item=thought] label[for=item-thought-{0 if value else 1}]")

    def test_intersession_daily(self):
        driver = self.driver
        therapist = staff_token("daily-therapist@example.org", "therapist", "daily passphrase 1")
        call("POST", "/accounts", {"email": "daily@example.org", "password": "daily passphrase 2", "privacyPolicyVersion": "1",
                                   "shareWithResearch": True, "locale": "en", "timeZone": "Europe/Vienna"})
        driver.get(link_in_outbox("daily@example.org", "/app/verify"))
        self.wait.until(EC.visibility_of_element_located((By.ID, "verify-done")))
        patient = call("POST", "/sessions", {"email": "daily@example.org", "password": "daily passphrase 2"})["token"]
        patient_id = pair(patient, therapist)

        # The therapist assigns the Daily twice from the patient's page in the console.
        self.console_sign_in("daily-therapist@example.org", "daily passphrase 1")
        self.wait_for_path("/console/patients")
        self.open(f"/console/patients/{patient_id}")
        for _ in range(2):
            Select(driver.find_element(By.ID, "instrumentKey")).select_by_value("intersession-daily")
            self.click("form[action$='/prompts'] button[type=submit]")
            self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "main .notice.ok")))
        self.console_sign_out()

        # First Daily: "no" hides the second section and is complete.
        self.sign_in_patient("daily@example.org", "daily passphrase 2")
        self.open("/app/questionnaires")
        self.wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#open-list a")) == 2)
        driver.find_elements(By.CSS_SELECTOR, "#open-list a")[0].click()
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-item=thought]")))
        self.assertFalse(driver.find_element(By.CSS_SELECTOR, "[data-section=feeling]").is_displayed())
        self.assertFalse(driver.find_element(By.ID, "submit").is_enabled())
        self.answer_yes_no(True)
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-section=feeling]")))
        self.assertFalse(driver.find_element(By.ID, "submit").is_enabled(), "yes requires the second section")
        self.assertIn("1 of 2", driver.find_element(By.ID, "progress-text").text)
        self.answer_yes_no(False)
        self.wait.until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "[data-section=feeling]")))
        self.assertIn("1 of 1", driver.find_element(By.ID, "progress-text").text)

        # Nothing is lost on reload.
        driver.refresh()
        self.wait.until(EC.element_to_be_clickable((By.ID, "submit")))
        self.assertTrue(driver.find_element(By.ID, "item-thought-1").is_selected())

        # Submitting asks for confirmation first, then the questionnaire is read-only.
        self.click("#submit")
        self.wait.until(EC.visibility_of_element_located((By.ID, "confirm")))
        self.click("#confirm-yes")
        self.wait_for_text("#questionnaire-status", "submitted")
        self.assertFalse(driver.find_element(By.ID, "item-thought-0").is_enabled())

        # Second Daily: "yes" and a feeling.
        self.open("/app/questionnaires")
        self.wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#open-list a")) == 1)
        self.wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#done-list a")) == 1)
        driver.find_element(By.CSS_SELECTOR, "#open-list a").click()
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-item=thought]")))
        self.answer_yes_no(True)
        self.click("#next-unanswered")
        self.wait.until(lambda d: d.switch_to.active_element.get_attribute("name") == "item-feeling")
        self.click("[data-item=feeling] label[for=item-feeling-1]")
        self.click("#submit")
        self.click("#confirm-yes")
        self.wait_for_text("#questionnaire-status", "submitted")

        # The completed one opens read-only from the list.
        self.open("/app/questionnaires")
        self.wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#done-list a")) == 2)
        driver.find_elements(By.CSS_SELECTOR, "#done-list a")[0].click()
        self.wait_for_text("#questionnaire-status", "no longer be changed")

        # The therapist sees both scores with a sparkline read out in words, both responses, and the answers in order.
        self.console_sign_in("daily-therapist@example.org", "daily passphrase 1")
        self.wait_for_path("/console/patients")
        self.open(f"/console/patients/{patient_id}")
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#summary-scores svg.sparkline")))
        scores = driver.find_element(By.ID, "summary-scores").text
        self.assertIn("Thought of therapy", scores)
        self.assertIn("Feeling when thinking of therapy", scores)
        labels = [chart.get_attribute("aria-label") for chart in driver.find_elements(By.CSS_SELECTOR, "#summary-scores svg.sparkline")]
        # The first Daily, answered "no", has no feeling to score.
        self.assertEqual([label.split(" from")[0] for label in labels], ["2 values", "1 value"], labels)
        rows = driver.find_elements(By.CSS_SELECTOR, "#answer-history tbody tr")
        self.assertEqual(len(rows), 2)
        rows[0].find_element(By.TAG_NAME, "a").click()
        self.wait_for_text("main table", "Rather positive")

    def test_slider_needs_a_touch(self):
        driver = self.driver
        call("POST", "/accounts", {"email": "slider@example.org", "password": "slider passphrase 2", "privacyPolicyVersion": "1",
                                   "shareWithResearch": False, "locale": "en", "timeZone": "Europe/Vienna"})
        driver.get(link_in_outbox("slider@example.org", "/app/verify"))
        self.wait.until(EC.visibility_of_element_located((By.ID, "verify-done")))
        therapist = staff_token("slider-therapist@example.org", "therapist", "slider passphrase 1")
        patient = call("POST", "/sessions", {"email": "slider@example.org", "password": "slider passphrase 2"})["token"]
        patient_id = pair(patient, therapist)
        prompt = call("POST", f"/patients/{patient_id}/prompts",
                      {"instrumentKey": "mood-vas", "opensAt": iso(), "closesAt": iso(60)}, token=therapist)
        self.sign_in_patient("slider@example.org", "slider passphrase 2")
        self.open(f"/app/questionnaires/{prompt['id']}")
        slider = self.wait.until(EC.presence_of_element_located((By.ID, "item-mood")))
        self.assertIn("untouched", slider.get_attribute("class"))
        self.assertFalse(driver.find_element(By.ID, "submit").is_enabled(), "an untouched slider is no answer")
        slider.click()
        self.wait.until(lambda d: "untouched" not in slider.get_attribute("class"))
        self.assertTrue(driver.find_element(By.ID, "submit").is_enabled())
        self.click("#submit")
        self.click("#confirm-yes")
        self.wait_for_text("#questionnaire-status", "submitted")
        self.wait.until(EC.visibility_of_element_located((By.ID, "feedback")))


if __name__ == "__main__":
    unittest.main()
