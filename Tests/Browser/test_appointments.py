"""Appointments and own times in a real browser, on accounts made by `interlude demo`.

The Intersession demo patient sees the month calendar with today and the next session marked, adds an
appointment (refused first without a title and off the five-minute grid, then by the server for lasting 13 hours),
changes and deletes it, and follows the private calendar address until it is stopped. A patient cannot delete a
session their therapist booked but asks to move it; the therapist finds the request on the chart and agrees, and
the session moves. The Track Your Stress demo patient sets their own daily window inside the study's bounds and is
refused outside them.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import datetime
import email
import email.policy
import glob
import os
import re
import subprocess
import time
import unittest
import urllib.error
import urllib.request
import uuid
from zoneinfo import ZoneInfo

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, pair, patient_token, staff_token

VIENNA = ZoneInfo("Europe/Vienna")


def demo(template):
    """Runs `interlude demo` and returns its accounts by role."""
    output = subprocess.run(
        [os.environ["INTERLUDE_BIN"], "demo", "--template", template], check=True, capture_output=True, text=True,
    ).stdout
    accounts = dict(
        (match.group(1), (match.group(2), match.group(3)))
        for match in re.finditer(r"^(therapist|patient|researcher): (\S+) (\S+)$", output, re.MULTILINE)
    )
    assert "therapist" in accounts and "patient" in accounts, output
    return accounts


class AppointmentsTest(BrowserTestCase):
    def sign_in_patient(self, address, password):
        self.open("/app/login")
        self.fill("email", address)
        self.fill("password", password)
        self.click("form[data-form=login] button[type=submit]")
        self.wait_for_path("/app")

    def set_value(self, element_id, value):
        element = self.wait.until(EC.presence_of_element_located((By.ID, element_id)))
        self.driver.execute_script(
            "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", element, value)

    def listed(self):
        return self.driver.find_elements(By.CSS_SELECTOR, "#appointments-list li")

    def wait_for_count(self, count):
        self.wait.until(lambda driver: len(self.listed()) == count)

    def fill_appointment(self, title, day, start, end):
        title_input = self.wait.until(EC.element_to_be_clickable((By.ID, "appointment-title")))
        title_input.clear()
        title_input.send_keys(title)
        self.set_value("appointment-date", day.isoformat())
        self.set_value("appointment-start", start)
        self.set_value("appointment-end", end)
        self.click("form[data-form=appointment] button[type=submit]")

    @staticmethod
    def email_to(recipient, subject):
        """The text of the email with `subject` to `recipient` the server wrote to its outbox, waiting for it."""
        for _ in range(100):
            for name in glob.glob(os.path.join(os.environ["INTERLUDE_DATA_DIR"], "outbox", "*.eml")):
                with open(name, "rb") as handle:
                    message = email.message_from_binary_file(handle, policy=email.policy.default)
                if message["To"] == recipient and message["Subject"] == subject:
                    return message.get_body(preferencelist=("plain",)).get_content()
            time.sleep(0.2)
        raise AssertionError(f"no email “{subject}” to {recipient}")

    def test_calendar_and_appointments(self):
        driver = self.driver
        address, password = demo("intersession")["patient"]
        token = call("POST", "/sessions", {"email": address, "password": password})["token"]
        sessions = call("GET", "/me/appointments", token=token)
        self.assertEqual(len(sessions), 2)
        self.sign_in_patient(address, password)
        self.open("/app/appointments")
        self.wait_for_count(2)

        # Today is marked, and the first session is the next appointment, in the calendar and in words.
        today = datetime.datetime.now(VIENNA).date()
        first = datetime.datetime.fromisoformat(sessions[0]["startsAt"].replace("Z", "+00:00")).astimezone(VIENNA)
        today_cell = driver.find_element(By.CSS_SELECTOR, "#month-days td[aria-current=date]")
        self.assertEqual(today_cell.get_attribute("data-date"), today.isoformat())
        if first.strftime("%Y-%m") != today.strftime("%Y-%m"):
            self.click("[data-action=next-month]")
        self.wait.until(EC.presence_of_element_located(
            (By.CSS_SELECTOR, f"#month-days td.next[data-date='{first.date().isoformat()}']")))
        self.assertIn("Therapy session", driver.find_element(By.ID, "next-appointment").text)
        self.assertIn("next", self.listed()[0].get_attribute("class"))
        # The sessions the therapist booked are theirs: marked so, with nothing to change or delete them by.
        self.assertIn("Booked by your therapist", self.listed()[0].text)
        actions = self.listed()[0].find_elements(By.CSS_SELECTOR, "[data-action]")
        self.assertEqual([action.get_attribute("data-action") for action in actions], ["ask-change"])
        self.click("[data-action=today]")
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#month-days td[aria-current=date]")))

        # Refused in the page: no title, a start off the five-minute grid, an end before the start.
        day = today + datetime.timedelta(days=5)
        self.fill_appointment("", day, "10:03", "09:00")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-for=title]")))
        self.assertIn("five minutes", driver.find_element(By.CSS_SELECTOR, "[data-for=startsAt]").text)
        self.assertEqual(len(call("GET", "/me/appointments", token=token)), 2)

        # Refused by the server: thirteen hours is longer than an appointment may last.
        self.fill_appointment("Long day", day, "08:00", "21:00")
        self.wait.until(lambda driver: driver.find_element(By.CSS_SELECTOR, "[data-for=endsAt]").text != "")
        self.assertEqual(len(call("GET", "/me/appointments", token=token)), 2)

        # Accepted, changed, deleted.
        self.fill_appointment("Extra session", day, "14:00", "14:50")
        self.wait_for_count(3)
        self.wait_for_text("#appointments-status", "saved")
        stored = [item for item in call("GET", "/me/appointments", token=token) if item["title"] == "Extra session"]
        self.assertEqual(len(stored), 1)
        starts = datetime.datetime.fromisoformat(stored[0]["startsAt"].replace("Z", "+00:00")).astimezone(VIENNA)
        self.assertEqual((starts.date(), starts.strftime("%H:%M")), (day, "14:00"))
        self.wait.until(EC.presence_of_element_located(
            (By.CSS_SELECTOR, f"#month-days td.has-appointment[data-date='{day.isoformat()}']")))

        self.click(f"#appointments-list li[data-id='{stored[0]['id']}'] [data-action=edit]")
        self.assertEqual(driver.find_element(By.ID, "appointment-title").get_attribute("value"), "Extra session")
        self.set_value("appointment-start", "15:00")
        self.set_value("appointment-end", "15:30")
        self.click("form[data-form=appointment] button[type=submit]")
        self.wait.until(lambda driver: any("15:00–15:30" in item.text for item in self.listed()))
        self.assertEqual(len(self.listed()), 3)

        self.click(f"#appointments-list li[data-id='{stored[0]['id']}'] [data-action=delete]")
        driver.switch_to.alert.accept()
        self.wait_for_count(2)
        self.assertEqual(len(call("GET", "/me/appointments", token=token)), 2)

        # The private calendar address shows the sessions until it is stopped.
        self.click("[data-action=show-feed]")
        self.wait.until(lambda driver: driver.find_element(By.ID, "feed-url").get_attribute("value"))
        url = driver.find_element(By.ID, "feed-url").get_attribute("value")
        self.assertRegex(url, r"/calendar/[A-Za-z0-9_-]+\.ics$")
        with urllib.request.urlopen(url) as response:
            calendar = response.read().decode()
        self.assertIn("BEGIN:VCALENDAR", calendar)
        self.assertEqual(calendar.count("BEGIN:VEVENT"), 2)
        self.click("[data-action=revoke-feed]")
        driver.switch_to.alert.accept()
        self.wait_for_text("#appointments-status", "no longer works")
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url)
        self.assertEqual(refused.exception.code, 404)

    def test_a_patient_asks_to_move_the_therapists_session_and_the_therapist_agrees(self):
        driver = self.driver
        suffix = uuid.uuid4().hex[:8]
        password = "a long enough password"
        therapist_address = f"move-therapist-{suffix}@example.org"
        therapist = staff_token(therapist_address, "therapist", password)
        patient_address = f"move-patient-{suffix}@example.org"
        patient = patient_token(patient_address, password)
        patient_id = pair(patient, therapist)
        starts = datetime.datetime.now(VIENNA).replace(hour=10, minute=0, second=0, microsecond=0) + datetime.timedelta(days=3)
        session = call("POST", f"/patients/{patient_id}/appointments", {
            "title": "Session", "startsAt": starts.isoformat(), "endsAt": (starts + datetime.timedelta(minutes=50)).isoformat(),
        }, token=therapist)
        with self.assertRaises(urllib.error.HTTPError) as refused:
            call("DELETE", f"/me/appointments/{session['id']}", token=patient)
        self.assertEqual(refused.exception.code, 409)

        self.sign_in_patient(patient_address, password)
        self.open("/app/appointments")
        self.wait_for_count(1)
        item = self.listed()[0]
        self.assertEqual(item.find_elements(By.CSS_SELECTOR, "[data-action=delete], [data-action=edit]"), [])
        self.click(f"#appointments-list li[data-id='{session['id']}'] [data-action=ask-change]")
        new_day = (starts + datetime.timedelta(days=1)).date()
        self.set_value(f"request-date-{session['id']}", new_day.isoformat())
        self.set_value(f"request-start-{session['id']}", "11:00")
        self.set_value(f"request-end-{session['id']}", "11:50")
        self.fill(f"request-note-{session['id']}", "I am at the doctor's that morning")
        driver.set_window_size(390, 844)
        self.assertLessEqual(driver.execute_script("return document.documentElement.scrollWidth"), 390, "nothing scrolls sideways")
        driver.save_screenshot(self.artefact("appointment-request-390.png"))
        driver.set_window_size(1280, 900)
        self.click("form[data-form=appointment-request] button[type=submit]")
        self.wait_for_text("#appointments-status", "request is sent")
        self.wait.until(lambda driver: "You asked to move it" in self.listed()[0].text)
        asked = call("GET", "/me/appointments", token=patient)[0]["request"]
        self.assertEqual(asked["kind"], "move")
        # The therapist is told (by email: no device of theirs takes push), with a link to the patient's sessions.
        told = self.email_to(therapist_address, "A patient asks to move a session")
        self.assertIn(f"/console/patients/{patient_id}#appointments".lower(), told.lower())

        # The therapist finds the request on the patient's chart, with the patient's words, and agrees.
        self.console_sign_in(therapist_address, password)
        self.open(f"/console/patients/{patient_id}#appointments")
        request = self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#appointments .appointment-request")))
        self.assertIn("The patient asks to move it to", request.text)
        self.assertIn("I am at the doctor's that morning", request.text)
        driver.execute_script("arguments[0].scrollIntoView()", request)
        driver.save_screenshot(self.artefact("appointment-request-console.png"))
        self.click("#appointments [data-action=grant]")
        self.wait_for_text("#appointments .notice.ok", "the patient is told")
        moved = call("GET", "/me/appointments", token=patient)[0]
        moved_start = datetime.datetime.fromisoformat(moved["startsAt"].replace("Z", "+00:00")).astimezone(VIENNA)
        self.assertEqual((moved_start.date(), moved_start.strftime("%H:%M")), (new_day, "11:00"))
        self.assertNotIn("request", moved)

    def test_own_times_within_bounds(self):
        driver = self.driver
        address, password = demo("track-your-stress")["patient"]
        self.sign_in_patient(address, password)
        self.open("/app/schedule")
        card = self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "section.adjustable")))
        self.assertIn("Track Your Stress", card.text)
        plan = card.get_attribute("data-plan")
        monday = f"plan-{plan}-monday-0"

        # Nine a day is more than the study allows: refused, and said where.
        self.set_value(f"{monday}-count", "9")
        self.click("section.adjustable button[type=submit]")
        self.wait.until(lambda driver: driver.find_element(
            By.CSS_SELECTOR, "fieldset[data-weekday=monday] [data-for='days.monday']").text != "")
        token = call("POST", "/sessions", {"email": address, "password": password})["token"]
        self.assertNotIn("adjustment", call("GET", "/me/plan-adjustments", token=token)[0])

        # Mornings only on Mondays, and no prompts on Sundays.
        self.set_value(f"{monday}-start", "09:00")
        self.set_value(f"{monday}-end", "12:00")
        self.set_value(f"{monday}-count", "2")
        self.click(f"label[for='plan-{plan}-sunday-on']")
        self.click("section.adjustable button[type=submit]")
        self.wait_for_text("#schedule-status", "saved")
        adjustment = call("GET", "/me/plan-adjustments", token=token)[0]["adjustment"]["days"]
        self.assertEqual(adjustment["monday"], [{"start": "09:00", "end": "12:00", "count": 2}])
        self.assertNotIn("sunday", adjustment)
        self.assertIn("Your own times", driver.find_element(By.CSS_SELECTOR, "section.adjustable").text)

        self.click("section.adjustable [data-action=reset]")
        self.wait_for_text("#schedule-status", "study's times")
        self.assertNotIn("adjustment", call("GET", "/me/plan-adjustments", token=token)[0])


if __name__ == "__main__":
    unittest.main()
