"""The session report in a real browser: a therapist opens a client's report, pins a note to a day through its form,
and the page printed shows the report without its forms; the client then sees the note on their own results, marked
on the chart of that day and listed with its words.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import datetime
import unittest
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import answers_for, call, iso, pair, patient_token, staff_token

PASSWORD = "a long enough password"


class SessionReportTest(BrowserTestCase):
    def test_a_note_pinned_in_the_report_prints_and_reaches_the_clients_chart(self):
        driver = self.driver
        suffix = uuid.uuid4().hex[:8]
        therapist_address = f"report-therapist-{suffix}@praxis.example"
        therapist = staff_token(therapist_address, "therapist", PASSWORD)
        patient_address = f"report-client-{suffix}@example.org"
        patient = patient_token(patient_address, PASSWORD)
        patient_id = pair(patient, therapist)
        for _ in range(2):
            prompt = call("POST", f"/patients/{patient_id}/prompts",
                          {"instrumentKey": "mood-vas", "opensAt": iso(-5), "closesAt": iso(600)}, token=therapist)
            definition = call("GET", f"/me/prompts/{prompt['id']}", token=patient)["definition"]
            call("POST", "/me/responses", {
                "id": str(uuid.uuid4()), "promptId": prompt["id"], "instrumentKey": "mood-vas", "version": prompt["instrumentVersion"],
                "answers": answers_for(definition), "completedAt": iso(),
            }, token=patient)
        today = datetime.date.today().isoformat()

        # The therapist pins a note to today from the report.
        self.console_sign_in(therapist_address, PASSWORD)
        self.wait_for_path("/console/patients")
        self.open(f"/console/patients/{patient_id}")
        self.click("#report-link")
        self.wait.until(lambda driver: driver.current_url.split("?")[0].lower().endswith(f"/{patient_id}/report"))
        driver.execute_script("document.getElementById('day').value = arguments[0]", today)
        self.fill("text", "Started a new medication")
        self.click("#notes form:last-of-type button[type=submit]")
        self.wait_for_text("#notes", "Started a new medication")
        self.wait_for_text("main", "The note is pinned")
        marker = driver.find_element(By.CSS_SELECTOR, "#scores svg .event-marker title")
        self.assertIn("Started a new medication", marker.get_attribute("textContent"))

        # Printed, the report keeps its content and drops its forms.
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        self.assertFalse(driver.find_element(By.CSS_SELECTOR, "form[method=get]").is_displayed())
        self.assertFalse(driver.find_element(By.ID, "text").is_displayed())
        self.assertTrue(driver.find_element(By.CSS_SELECTOR, "#scores svg").is_displayed())
        self.assertTrue(driver.find_element(By.ID, "compliance").is_displayed())
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        self.console_sign_out()

        # The client sees it on their results: listed, and marked on the chart of that day.
        self.app_sign_in(patient_address, PASSWORD)
        self.open("/app/results")
        self.wait.until(EC.visibility_of_element_located((By.ID, "notes")))
        self.wait_for_text("#notes-list", "Started a new medication")
        chart = driver.find_element(By.CSS_SELECTOR, "section[data-instrument=mood-vas] svg[role=img]")
        note = chart.find_element(By.CSS_SELECTOR, "g.result-note title")
        self.assertIn("Started a new medication", note.get_attribute("textContent"))
        self.assertIn("the days your therapist noted (1)", chart.find_element(By.TAG_NAME, "desc").get_attribute("textContent"))


if __name__ == "__main__":
    unittest.main()
