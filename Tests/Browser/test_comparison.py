"""A therapist's comparison in a real browser: the practice's Comparison page divides the patients who pair into an
app arm and a control arm; between sessions, the control arm's patient is shown as receiving nothing and offered no
form, while the app arm's patient is sent an intervention that reaches them.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import unittest
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from browser_support import BrowserTestCase
from interlude_e2e import call, pair, patient_token, staff_token

PASSWORD = "a long enough password"


class ComparisonTest(BrowserTestCase):
    def test_the_control_arm_receives_nothing_and_the_app_arm_an_intervention(self):
        driver = self.driver
        suffix = uuid.uuid4().hex[:8]
        therapist_address = f"comparison-therapist-{suffix}@praxis.example"
        therapist = staff_token(therapist_address, "therapist", PASSWORD)

        # The therapist divides the patients who pair from now on: the app, then usual care as the control arm.
        self.console_sign_in(therapist_address, PASSWORD)
        self.wait_for_path("/console/patients")
        self.open("/console/arms")
        self.wait.until(lambda driver: driver.current_url.split("?")[0].endswith("/arms"))
        self.fill("armName-0", "App")
        self.fill("armName-1", "Usual care")
        Select(driver.find_element(By.ID, "armReceives-1")).select_by_value("control")
        Select(driver.find_element(By.ID, "allocation")).select_by_value("alternating")
        self.click("form.card button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".notice.ok")))
        self.assertEqual(driver.find_element(By.ID, "armName-1").get_attribute("value"), "Usual care")
        self.assertEqual(Select(driver.find_element(By.ID, "armReceives-1")).first_selected_option.get_attribute("value"),
                         "control")

        # Two patients pair, in turn: Ada to the app, Ben to usual care.
        ada = patient_token(f"comparison-ada-{suffix}@example.org", PASSWORD)
        ada_id = pair(ada, therapist)
        ben = patient_token(f"comparison-ben-{suffix}@example.org", PASSWORD)
        ben_id = pair(ben, therapist)

        # Between sessions, Ben's page says he receives nothing and offers no form to send it.
        self.open(f"/console/patients/{ben_id}/intersession")
        notice = self.wait.until(EC.visibility_of_element_located((By.ID, "control-arm")))
        self.assertIn("control arm", notice.text)
        self.assertEqual(driver.find_elements(By.ID, "text"), [])

        # Ada's page sends her a commendation, which reaches her.
        self.open(f"/console/patients/{ada_id}/intersession")
        Select(self.wait.until(EC.element_to_be_clickable((By.ID, "kind")))).select_by_value("commendation")
        self.fill("text", "Well done with the exercises this week.")
        self.click("form[action$='/interventions'] button[type=submit]")
        self.wait_for_text("#intervention-list", "Well done with the exercises this week.")
        self.assertEqual(driver.find_elements(By.ID, "control-arm"), [])
        self.console_sign_out()

        texts = [item["text"] for item in call("GET", "/me/interventions", token=ada)]
        self.assertIn("Well done with the exercises this week.", texts)
        self.assertEqual(call("GET", "/me/interventions", token=ben), [])


if __name__ == "__main__":
    unittest.main()
