"""A participant's own times in a real browser: the weekly questionnaire's time is moved inside the study's bounds
(a time outside them is refused beside the field), and a daily plan that offers both is switched from random
windows to fixed times.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import unittest
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, patient_token, staff_token

WINDOWS = {day: [{"start": "09:00", "end": "12:00", "count": 1}]
           for day in ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]}


class MyTimesTest(BrowserTestCase):
    def set_time(self, field_id, value):
        # Time inputs take their value as the browser shows it; setting it directly is the same for every locale.
        field = self.wait.until(EC.presence_of_element_located((By.ID, field_id)))
        self.driver.execute_script(
            "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}))", field, value)

    def test_weekly_time_and_fixed_times_instead_of_random_windows(self):
        suffix = uuid.uuid4().hex[:8]
        researcher = staff_token(f"times-researcher-{suffix}@uni.example", "researcher", "a long enough password")
        study = call("POST", "/studies", {
            "title": f"My own times {suffix}", "consentText": "I take part.", "consentVersion": "1", "joinMode": "open",
        }, token=researcher)
        weekly = call("POST", f"/studies/{study['id']}/plans", {
            "instrumentKey": "who-5", "durationMinutes": 600, "pattern": {"kind": "weekly", "weekday": "sunday", "time": "18:00"},
            "adjustment": {"earliest": "08:00", "latest": "20:00", "minCount": 1, "maxCount": 1},
        }, token=researcher)
        daily = call("POST", f"/studies/{study['id']}/plans", {
            "instrumentKey": "mood-vas", "durationMinutes": 30, "pattern": {"kind": "randomWindows", "days": WINDOWS},
            "adjustment": {"earliest": "07:00", "latest": "21:00", "minCount": 1, "maxCount": 2, "eitherMode": True},
        }, token=researcher)
        address = f"times-patient-{suffix}@example.org"
        patient = patient_token(address, "a long enough password")
        call("POST", f"/studies/{study['id']}/enrollment", {"consentVersion": "1"}, token=patient)

        self.app_sign_in(address, "a long enough password")
        self.open("/app/schedule")
        weekly_card = f"section[data-plan='{weekly['id']}']"
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, weekly_card)))
        self.assertIn("between 08:00 and 20:00", self.driver.find_element(By.CSS_SELECTOR, weekly_card).text)

        self.set_time(f"plan-{weekly['id']}-time", "21:30")
        self.click(f"{weekly_card} button[type=submit]")
        self.wait.until(lambda driver: driver.find_element(By.CSS_SELECTOR, f"{weekly_card} .error[data-for=time]").is_displayed())
        self.set_time(f"plan-{weekly['id']}-time", "09:30")
        self.click(f"{weekly_card} button[type=submit]")
        self.wait_for_text("#schedule-status", "saved")
        saved = {plan["planId"]: plan for plan in call("GET", "/me/plan-adjustments", token=patient)}
        self.assertEqual(saved[weekly["id"]]["adjustment"], {"time": "09:30"})

        daily_card = f"section[data-plan='{daily['id']}']"
        self.click(f"label[for=plan-{daily['id']}-mode-fixedTimes]")
        self.set_time(f"plan-{daily['id']}-time-0", "08:15")
        self.set_time(f"plan-{daily['id']}-time-1", "20:00")
        self.click(f"{daily_card} button[type=submit]")
        self.wait.until(lambda _: {plan["planId"]: plan for plan in call("GET", "/me/plan-adjustments", token=patient)}
                        [daily["id"]].get("adjustment"))
        adjustment = {plan["planId"]: plan for plan in call("GET", "/me/plan-adjustments", token=patient)}[daily["id"]]["adjustment"]
        self.assertEqual(adjustment["times"], ["08:15", "20:00"])
        self.assertEqual(len(adjustment["weekdays"]), 7)
        self.open("/app/schedule")
        self.wait.until(EC.presence_of_element_located((By.ID, f"plan-{daily['id']}-mode-fixedTimes")))
        self.assertTrue(self.driver.find_element(By.ID, f"plan-{daily['id']}-mode-fixedTimes").is_selected(),
                        "the chosen mode is shown on the next visit")


if __name__ == "__main__":
    unittest.main()
