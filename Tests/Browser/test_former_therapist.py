"""A former therapist's access, ended by the patient in a real browser: the therapist whose treatment ended is
listed with the day it ended; ending the access keeps the patient's data and the therapist no longer finds them.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import unittest
import urllib.error
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, iso, pair, patient_token, staff_token

PASSWORD = "a long enough password"


class FormerTherapistTest(BrowserTestCase):
    def test_the_patient_ends_a_former_therapists_access_and_keeps_their_data(self):
        suffix = uuid.uuid4().hex[:8]
        early = staff_token(f"early-{suffix}@example.org", "therapist", PASSWORD)
        call("PUT", "/me/therapist-profile", {"fullName": f"Dr. Early {suffix}"}, token=early)
        now = staff_token(f"now-{suffix}@example.org", "therapist", PASSWORD)
        address = f"former-patient-{suffix}@example.org"
        patient = patient_token(address, PASSWORD)
        patient_id = pair(patient, early)
        call("POST", "/me/moods", {"id": str(uuid.uuid4()), "valence": 0.4, "recordedAt": iso(-5)}, token=patient)
        call("PATCH", f"/patients/{patient_id}", {"status": "ended"}, token=early)
        pair(patient, now)

        self.app_sign_in(address, PASSWORD)
        self.open("/app/therapist")
        self.wait.until(EC.visibility_of_element_located((By.ID, "former")))
        entry = self.driver.find_element(By.CSS_SELECTOR, "#former-list li")
        self.assertIn(f"Dr. Early {suffix}", entry.text)
        self.assertIn("Treatment ended on", entry.text)
        button = entry.find_element(By.TAG_NAME, "button")
        self.assertGreaterEqual(button.size["height"], 44)
        self.tap(button)
        self.wait.until(EC.alert_is_present())
        self.driver.switch_to.alert.accept()
        self.wait_for_text("#former-status", "can no longer read your data")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#former-list li"), [])

        with self.assertRaises(urllib.error.HTTPError) as refused:
            call("GET", f"/patients/{patient_id}", token=early)
        self.assertEqual(refused.exception.code, 404)
        self.assertEqual(len(call("GET", "/me/moods", token=patient)), 1)
        treatments = call("GET", "/me/treatments", token=patient)
        self.assertEqual([t["formerAccess"] for t in treatments if t["status"] == "ended"], [False])


if __name__ == "__main__":
    unittest.main()
