"""A therapist's alerts in a real browser: the high-priority one first and bannered on every console page until it is
acknowledged, told in words with the question and the answer, and linked to the answers; at a phone's width too; and
the patient's chart opening with them and the latest scores. A rule is built from the questionnaire's own
questions and bands, chosen from lists.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from browser_support import BrowserTestCase
from interlude_e2e import call, iso, pair, patient_token, staff_token

PASSWORD = "a long enough password"
QUESTION = "Thoughts that you would be better off dead or of hurting yourself in some way"


class AlertsTest(BrowserTestCase):
    def answer(self, patient, therapist, patient_id, instrument, answers):
        prompt = call("POST", f"/patients/{patient_id}/prompts",
                      {"instrumentKey": instrument, "opensAt": iso(-5), "closesAt": iso(600)}, token=therapist)
        call("POST", "/me/responses", {
            "id": str(uuid.uuid4()), "promptId": prompt["id"], "instrumentKey": instrument, "version": 1,
            "answers": answers, "startedAt": iso(-1), "completedAt": iso(),
        }, token=patient)

    def test_a_rule_is_built_from_the_questionnaires_own_questions_and_bands(self):
        address = f"rules-therapist-{uuid.uuid4().hex[:8]}@example.org"
        staff_token(address, "therapist", PASSWORD)
        self.console_sign_in(address, PASSWORD)
        self.wait.until(lambda driver: "/console/login" not in driver.current_url)
        self.open("/console/rules")
        self.wait.until(EC.presence_of_element_located((By.ID, "instrumentKey")))
        Select(self.driver.find_element(By.ID, "instrumentKey")).select_by_value("phq-9")
        questions = [option.text for option in self.driver.find_elements(By.CSS_SELECTOR, "#id0 option")]
        self.assertIn(QUESTION, questions)
        self.assertIn("Depression severity", questions)
        Select(self.driver.find_element(By.ID, "subject0")).select_by_value("item")
        Select(self.driver.find_element(By.ID, "id0")).select_by_value("phq9_9")
        bands = [option.get_attribute("value") for option in self.driver.find_elements(By.CSS_SELECTOR, "#bands0 option")]
        self.assertIn("severe", bands)
        self.fill("name", "Thoughts of self-harm")
        Select(self.driver.find_element(By.ID, "operator0")).select_by_value("greater")
        self.fill("value0", "0")
        self.click("input[name=action][value=alert]")
        self.fill("message", "Call the patient today")
        self.click("button[name=intent][value=add]")
        self.wait.until(lambda driver: "added=1" in driver.current_url)
        self.assertIn(f"(item “{QUESTION}” > 0)", self.driver.find_element(By.TAG_NAME, "main").text)

    def test_the_crisis_alert_is_first_bannered_and_told_in_words(self):
        suffix = uuid.uuid4().hex[:8]
        address = f"al-therapist-{suffix}@example.org"
        therapist = staff_token(address, "therapist", PASSWORD)
        patient = patient_token(f"al-patient-{suffix}@example.org", PASSWORD)
        patient_id = pair(patient, therapist)
        practice = call("GET", "/me/treatments", token=patient)[0]["studyId"]
        call("POST", f"/studies/{practice}/rules", {
            "name": "WHO-5 sent", "trigger": {"kind": "submitted", "instrumentKey": "who-5",
                                               "condition": {"mode": "all", "clauses": []}},
            "action": {"kind": "alert", "priority": "normal", "message": "Look at the WHO-5."}}, token=therapist)
        # First the normal alert, then the crisis answer: by time the crisis would come second.
        self.answer(patient, therapist, patient_id, "who-5", {f"who5_{n}": "3" for n in range(1, 6)})
        self.answer(patient, therapist, patient_id, "phq-9", {f"phq9_{n}": "1" if n == 9 else "0" for n in range(1, 10)})

        self.console_sign_in(address, PASSWORD)
        self.open("/console/patients")
        banner = self.wait.until(EC.visibility_of_element_located((By.ID, "urgent-alerts")))
        self.assertIn("A high-priority alert is waiting for you.", banner.text)
        self.assertLessEqual(self.driver.execute_script("return document.documentElement.scrollWidth"),
                             self.driver.execute_script("return window.innerWidth"), "nothing scrolls sideways")
        self.click("#urgent-alerts a")
        self.wait_for_path("/console/alerts")
        rows = self.driver.find_elements(By.CSS_SELECTOR, "#alert-list li.alert-row")
        self.assertEqual(len(rows), 2)
        self.assertIn("High priority", rows[0].text)
        self.assertIn(f"Answered “Several days” to “{QUESTION}”", rows[0].text)
        self.assertIn("Look at the WHO-5.", rows[1].text)
        self.driver.set_window_size(360, 800)
        self.assertLessEqual(self.driver.execute_script("return document.documentElement.scrollWidth"), 360)
        self.driver.save_screenshot(self.artefact("alerts-360.png"))
        self.driver.set_window_size(420, 900)

        rows[0].find_element(By.LINK_TEXT, "See the answers").click()
        self.wait.until(lambda driver: "/responses/" in driver.current_url)
        self.assertIn(QUESTION, self.driver.find_element(By.TAG_NAME, "main").text)
        self.assertIn("Several days", self.driver.find_element(By.TAG_NAME, "main").text)

        # The patient's chart opens with the open alerts, the crisis first, and the latest scores on the first screen.
        self.driver.set_window_size(1280, 900)
        self.open(f"/console/patients/{patient_id}")
        alerts = self.wait.until(EC.visibility_of_element_located((By.ID, "open-alerts")))
        lines = alerts.find_elements(By.CSS_SELECTOR, "li.alert-line")
        self.assertEqual(len(lines), 2)
        self.assertIn(QUESTION, lines[0].text)
        self.assertIn("Look at the WHO-5.", lines[1].text)
        scores = self.driver.find_element(By.ID, "summary-scores")
        self.assertIn("Patient Health Questionnaire (PHQ-9)", scores.text)
        self.assertTrue(scores.find_elements(By.CSS_SELECTOR, "svg.sparkline"))
        self.assertLess(scores.location["y"], 900, "the scores are on the first screen")
        manage = self.driver.find_element(By.ID, "manage")
        self.assertGreater(manage.location["y"], scores.location["y"], "managing the treatment comes after")
        self.driver.save_screenshot(self.artefact("patient-chart-first-screen.png"))
        lines[0].find_element(By.LINK_TEXT, "See the answers").click()
        self.wait.until(lambda driver: "/responses/" in driver.current_url)
        self.driver.set_window_size(420, 900)

        # Acknowledged, the banner goes from every page.
        self.open("/console/alerts")
        alert_id = self.driver.find_elements(By.CSS_SELECTOR, "#alert-list li.alert-row")[0].get_attribute("data-alert")
        self.fill(f"note-{alert_id}", "Called; safe for now.")
        self.click(f"li[data-alert='{alert_id}'] button[type=submit]")
        self.wait_for_text(".notice.ok", "")
        self.open("/console/patients")
        self.assertEqual(self.driver.find_elements(By.ID, "urgent-alerts"), [])
