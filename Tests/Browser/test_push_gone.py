"""Notifications that stopped reaching a phone, as the patient meets it: the push service answers 410 for the
browser's subscription, the server disables it, and at the patient's next visit the app says so above the page, in
their language, with a way to turn notifications on again; the profile says the same and offers the switch. Told
once per visit, not on every page.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set, against a server that
allows loopback push endpoints and dispatches every second.
"""
import base64
import json
import os
import time
import uuid

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, iso, pair, patient_token, staff_token
from push_endpoint import PushEndpoint

PASSWORD = "a long enough password"
LOCALES = os.path.join(os.path.dirname(__file__), "..", "..", "Resources", "Locales")


def catalogue(language):
    with open(os.path.join(LOCALES, f"{language}.json"), encoding="utf-8") as handle:
        return json.load(handle)


class PushGoneTest(BrowserTestCase):
    def test_the_patient_is_told_at_their_next_visit_and_can_turn_notifications_on_again(self):
        endpoint = PushEndpoint()
        self.addCleanup(endpoint.stop)
        suffix = uuid.uuid4().hex[:8]
        therapist = staff_token(f"gone-therapist-{suffix}@example.org", "therapist", PASSWORD)
        address = f"gone-patient-{suffix}@example.org"
        patient = patient_token(address, PASSWORD)
        patient_id = pair(patient, therapist)
        public = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        keys = {"p256dh": base64.urlsafe_b64encode(public).rstrip(b"=").decode(),
                "auth": base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()}
        device = call("POST", "/me/devices", {
            "platform": "webpush", "subscription": {"endpoint": endpoint.url + "/gone/phone", "keys": keys},
        }, token=patient)
        call("POST", f"/patients/{patient_id}/prompts",
             {"instrumentKey": "who-5", "opensAt": iso(), "closesAt": iso(24 * 60)}, token=therapist)
        endpoint.wait_for("/gone/phone")
        deadline = time.time() + 30
        while time.time() < deadline and call("GET", "/me/devices", token=patient)[0]["active"]:
            time.sleep(0.3)
        self.assertFalse(call("GET", "/me/devices", token=patient)[0]["active"])

        english, german = catalogue("en"), catalogue("de")
        self.driver.set_window_size(360, 740)
        self.app_sign_in(address, PASSWORD)
        # The phone that had notifications on remembers its device, as the profile's switch leaves it.
        self.driver.execute_script(
            "localStorage.setItem('interlude.pushDevice', arguments[0]);"
            "sessionStorage.removeItem('interlude.pushChecked');", device["id"])
        self.open("/app")
        notice = self.wait.until(EC.visibility_of_element_located((By.ID, "push-gone")))
        self.assertIn(english["app.push.gone"], notice.text)
        self.driver.save_screenshot(self.artefact("push-gone.png"))
        self.assertLessEqual(self.driver.execute_script("return document.documentElement.scrollWidth"),
                             self.driver.execute_script("return window.innerWidth"), "nothing scrolls sideways")
        self.tap(notice.find_element(By.TAG_NAME, "a"))
        self.wait.until(lambda driver: "/app/profile#notifications" in driver.current_url)
        self.wait_for_text("#push-status", english["app.notifications.gone"])
        self.assertTrue(self.driver.find_element(By.CSS_SELECTOR, '[data-action="push-on"]').is_displayed())
        self.assertFalse(self.driver.find_element(By.CSS_SELECTOR, '[data-action="push-off"]').is_displayed())

        # Once per visit: the next page does not say it again.
        self.open("/app")
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "[data-page]")))
        time.sleep(1)
        self.assertFalse(self.driver.find_element(By.ID, "push-gone").is_displayed())

        # The next visit, in German.
        self.driver.execute_script("sessionStorage.removeItem('interlude.pushChecked')")
        self.open("/language?set=de&next=/app")
        notice = self.wait.until(EC.visibility_of_element_located((By.ID, "push-gone")))
        self.assertIn(german["app.push.gone"], notice.text)
        self.assertIn(german["app.push.again"], notice.text)
