"""A copy of the person's data from the patient app: asked for, written in the background, downloaded once.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import unittest
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, patient_token


class MyDataTest(BrowserTestCase):
    def test_the_copy_is_asked_for_told_when_ready_and_downloads_once(self):
        suffix = uuid.uuid4().hex[:8]
        address = f"copy-patient-{suffix}@example.org"
        patient = patient_token(address, "a long enough password")
        self.app_sign_in(address, "a long enough password")
        self.open("/app/my-data")
        # Every text the status shows on the way, to check the page's own words (not the offline outbox's) are used.
        self.driver.execute_script("""
            window.shownTexts = [];
            const status = document.getElementById("my-data-status");
            new MutationObserver(() => window.shownTexts.push(status.textContent))
              .observe(status, { childList: true, characterData: true, subtree: true });
        """)
        self.click("#my-data-request")
        # The server's export job runs every second: the page looks again until the copy is ready.
        self.wait.until(EC.visibility_of_element_located((By.ID, "my-data-download")))
        self.wait_for_text("#my-data-status", "can be downloaded once")
        shown = self.driver.execute_script("return window.shownTexts")
        self.assertFalse([text for text in shown if "Saved on this device" in text], shown)
        self.click("#my-data-download")
        self.wait_for_text("#my-data-status", "Downloaded")
        status = call("GET", "/me/export/status", token=patient)
        self.assertEqual(status["status"], "expired")
        self.assertIsNotNone(status.get("downloadedAt"))
        self.assertFalse(self.driver.find_element(By.ID, "my-data-download").is_displayed())


if __name__ == "__main__":
    unittest.main()
