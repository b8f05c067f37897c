"""The patient's interventions in a real browser: the inbox, a question answered on the device (never sent), the
encrypted backup restored on a fresh sign-in, and crisis help shown at once for PHQ-9 item 9.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import os
import sqlite3
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, iso, pair, patient_token, staff_token

PASSWORD = "a long enough password"
ANSWER = "I called my sister and we talked for an hour"


def database_holds(text):
    """Whether any text column of any table of the server's SQLite database contains `text`."""
    path = os.path.join(os.environ["INTERLUDE_DATA_DIR"], "interlude.sqlite")
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in connection.execute(f'SELECT * FROM "{table}"'):
                if any(isinstance(value, str) and text in value for value in row):
                    return True
        return False
    finally:
        connection.close()


class InterventionsTest(BrowserTestCase):
    def sign_in(self, address):
        self.open("/app/login")
        self.fill("email", address)
        self.fill("password", PASSWORD)
        self.click("form[data-form=login] button[type=submit]")
        self.wait_for_path("/app")

    def test_a_question_is_answered_on_the_device_backed_up_encrypted_and_restored(self):
        suffix = uuid.uuid4().hex[:8]
        therapist = staff_token(f"iv-therapist-{suffix}@example.org", "therapist", PASSWORD)
        address = f"iv-patient-{suffix}@example.org"
        patient = patient_token(address, PASSWORD)
        patient_id = pair(patient, therapist)
        question = call("POST", f"/patients/{patient_id}/interventions",
                        {"kind": "question", "text": "What did you do for yourself this week?"}, token=therapist)
        call("POST", f"/patients/{patient_id}/interventions", {"kind": "commendation", "text": "Well done!"}, token=therapist)

        self.sign_in(address)
        self.wait_for_text("#new-interventions", "2")
        self.click("a[href='/app/interventions']")
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f"#new-list a[data-intervention='{question['id']}']")))
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#new-list li")), 2)
        # The list shows what each says, not only its kind.
        listed = self.driver.find_element(By.ID, "new-list").text
        self.assertIn("What did you do for yourself this week?", listed)
        self.assertIn("Well done!", listed)
        self.click(f"#new-list a[data-intervention='{question['id']}']")
        self.wait_for_text("#intervention-text", "What did you do for yourself this week?")
        # The first question tells the person that the answer stays on the phone.
        self.wait_for_text("#answer-notice", "never sent to the server")
        self.click("#answer-notice-ok")
        self.fill("answer", ANSWER)
        self.click("#confirm")
        self.wait_for_text("#intervention-status", "Completed on")
        self.assertFalse(self.driver.find_element(By.ID, "answer").is_enabled())
        states = {item["id"]: item for item in call("GET", "/me/interventions", token=patient)}
        self.assertEqual(states[question["id"]]["state"], "completed")
        self.assertFalse(database_holds(ANSWER))
        seen = call("GET", f"/patients/{patient_id}/interventions", token=therapist)
        self.assertEqual({item["id"]: item["state"] for item in seen}[question["id"]], "completed")

        # The backup: sealed in the browser, stored as ciphertext only.
        self.open("/app/interventions")
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f"#done-list a[data-intervention='{question['id']}']")))
        self.fill("passphrase", "blue heron at dawn")
        self.click("form[data-form=backup] button[type=submit]")
        self.wait_for_text("form[data-form=backup] [data-success]", "backed up")
        backup = call("GET", "/me/backup", token=patient)
        self.assertEqual(backup["envelope"]["iterations"], 600000)
        self.assertFalse(database_holds(ANSWER))
        self.assertFalse(database_holds("blue heron"))

        # Signing out deletes the answers on this device; a fresh sign-in restores them with the passphrase.
        self.open("/app/profile")
        self.click("[data-action=logout]")
        self.wait_for_path("/app/login")
        self.assertIsNone(self.driver.execute_script("return localStorage.getItem('interlude.interventionAnswers')"))
        self.sign_in(address)
        self.open("/app/interventions")
        self.fill("passphrase", "blue heron at dusk")
        self.click("#backup-restore")
        self.wait_for_text("#passphrase-error", "does not open the backup")
        self.fill("passphrase", "blue heron at dawn")
        self.click("#backup-restore")
        self.wait_for_text("form[data-form=backup] [data-success]", "restored")
        self.open(f"/app/interventions/{question['id']}")
        self.wait.until(lambda driver: driver.find_element(By.ID, "answer").get_attribute("value") == ANSWER)
        self.wait_for_text("#intervention-status", "Completed on")

    def test_a_commendation_confirmed_offline_is_reported_when_the_connection_returns(self):
        driver = self.driver
        suffix = uuid.uuid4().hex[:8]
        therapist = staff_token(f"iv-offline-therapist-{suffix}@example.org", "therapist", PASSWORD)
        address = f"iv-offline-patient-{suffix}@example.org"
        patient = patient_token(address, PASSWORD)
        patient_id = pair(patient, therapist)
        commendation = call("POST", f"/patients/{patient_id}/interventions",
                            {"kind": "commendation", "text": "You kept every appointment."}, token=therapist)

        self.sign_in(address)
        self.wait_for_service_worker()
        self.open("/app/interventions")
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f"a[data-intervention='{commendation['id']}']")))
        self.open(f"/app/interventions/{commendation['id']}")
        self.wait_for_text("#intervention-text", "You kept every appointment.")

        driver.set_network_conditions(offline=True, latency=5, download_throughput=1024 * 1024, upload_throughput=1024 * 1024)
        try:
            self.open(f"/app/interventions/{commendation['id']}")
            self.wait_for_text("#intervention-text", "You kept every appointment.")
            self.click("#confirm")
            self.wait_for_text("#intervention-status", "will be reported when you are online")
            self.wait_for_text("#outbox-status", "1 change waits")
            self.assertEqual(call("GET", "/me/interventions", token=patient)[0]["state"], "seen")
        finally:
            driver.set_network_conditions(offline=False, latency=5, download_throughput=1024 * 1024, upload_throughput=1024 * 1024)
        driver.execute_script("window.dispatchEvent(new Event('online'))")
        self.wait.until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "#outbox-status")))
        self.assertEqual(call("GET", "/me/interventions", token=patient)[0]["state"], "completed")

    def test_crisis_help_appears_at_once_for_phq9_item_9(self):
        suffix = uuid.uuid4().hex[:8]
        therapist = staff_token(f"crisis-therapist-{suffix}@example.org", "therapist", PASSWORD)
        call("PUT", "/me/therapist-profile", {"fullName": "Dr. Anna Berger", "emergencyNumber": "+43 1 234 56 78"},
             token=therapist)
        address = f"crisis-patient-{suffix}@example.org"
        patient = patient_token(address, PASSWORD)
        patient_id = pair(patient, therapist)
        prompt = call("POST", f"/patients/{patient_id}/prompts",
                      {"instrumentKey": "phq-9", "opensAt": iso(), "closesAt": iso(24 * 60)}, token=therapist)

        self.sign_in(address)
        self.open(f"/app/questionnaires/{prompt['id']}")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-item=phq9_9]")))
        self.click("label[for=item-phq9_8-1]")
        self.assertFalse(self.driver.find_element(By.ID, "crisis").is_displayed())
        self.click("label[for=item-phq9_9-1]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "crisis")))
        number = self.driver.find_element(By.ID, "crisis-number")
        self.assertIn("+43 1 234 56 78", number.text)
        self.assertEqual(number.get_attribute("href"), "tel:+4312345678")
        self.assertIn("112", self.driver.find_element(By.ID, "crisis").text)
