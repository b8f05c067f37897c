"""The patient app without a connection: a questionnaire read once stays available, answers given offline wait
on the device (IndexedDB) and are sent once when the connection returns.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import datetime
import time
import unittest
import uuid
from zoneinfo import ZoneInfo

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, iso, pair, patient_token, staff_token

VIENNA = ZoneInfo("Europe/Vienna")


class OfflineTest(BrowserTestCase):
    def set_offline(self, offline):
        self.driver.set_network_conditions(
            offline=offline, latency=5, download_throughput=1024 * 1024, upload_throughput=1024 * 1024)

    def tearDown(self):
        self.set_offline(False)
        super().tearDown()

    def patient_with_who5(self, prefix):
        """A patient paired with a therapist who assigned a WHO-5, signed in to the app; (token, prompt)."""
        suffix = uuid.uuid4().hex[:8]
        therapist = staff_token(f"{prefix}-therapist-{suffix}@example.org", "therapist", "a long enough password")
        address = f"{prefix}-patient-{suffix}@example.org"
        patient = patient_token(address, "a long enough password")
        patient_id = pair(patient, therapist)
        prompt = call("POST", f"/patients/{patient_id}/prompts", {
            "instrumentKey": "who-5", "opensAt": iso(), "closesAt": iso(24 * 60),
        }, token=therapist)
        self.app_sign_in(address, "a long enough password")
        return patient, prompt

    def test_answers_given_offline_are_sent_once_when_the_connection_returns(self):
        driver = self.driver
        patient, prompt = self.patient_with_who5("offline")
        # The service worker takes over the app; the questionnaire is read once while online.
        self.wait_for_service_worker()
        self.open(f"/app/questionnaires/{prompt['id']}")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-item=who5_1]")))
        self.open("/app/questionnaires")
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#open-list a")))

        self.set_offline(True)
        self.open(f"/app/questionnaires/{prompt['id']}")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#connection")))
        for number in range(1, 6):
            self.click(f"label[for=item-who5_{number}-1]")
        self.click("#submit")
        self.click("#confirm-yes")
        self.wait_for_text("#questionnaire-status", "Saved on this device")
        self.wait_for_text("#outbox-status", "1 change waits")
        self.assertEqual(call("GET", "/me/responses", token=patient), [])

        self.set_offline(False)
        driver.execute_script("window.dispatchEvent(new Event('online'))")
        self.wait.until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "#outbox-status")))
        responses = call("GET", "/me/responses", token=patient)
        self.assertEqual(len(responses), 1)
        self.assertEqual(responses[0]["promptId"], prompt["id"])

        # Sending again (another page load) changes nothing; the questionnaire now reads as answered.
        self.open(f"/app/questionnaires/{prompt['id']}")
        self.wait_for_text("#questionnaire-status", "You submitted this questionnaire")
        time.sleep(1)
        self.assertEqual(len(call("GET", "/me/responses", token=patient)), 1)


    def test_signing_out_with_unsent_answers_warns_and_sends_them_first(self):
        driver = self.driver
        patient, prompt = self.patient_with_who5("signout")
        self.open(f"/app/questionnaires/{prompt['id']}")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-item=who5_1]")))

        self.set_offline(True)
        for number in range(1, 6):
            self.click(f"label[for=item-who5_{number}-2]")
        self.click("#submit")
        self.click("#confirm-yes")
        self.wait_for_text("#questionnaire-status", "Saved on this device")
        self.open("/app/profile")
        self.wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, "[data-action=logout]")))
        self.assertTrue(driver.find_element(By.ID, "deleteAnswersOnSignOut").is_selected(), "deleting answers is the default")

        # Signing out warns; staying keeps the person signed in with the answer still waiting.
        self.click("[data-action=logout]")
        self.wait_for_text("#logout-pending-count", "1 change on this device has not been sent yet")
        self.click("#logout-pending [data-cancel]")
        self.wait.until(EC.invisibility_of_element_located((By.ID, "logout-pending")))
        self.assertTrue(driver.execute_script("return Boolean(localStorage.getItem('interlude.token'))"))

        # Sending while still offline cannot work and says so; back online, it sends and then signs out.
        self.click("[data-action=logout]")
        self.click("#logout-pending [data-send]")
        self.wait_for_text("#logout-pending-count", "no connection")
        self.assertEqual(call("GET", "/me/responses", token=patient), [])
        self.set_offline(False)
        self.click("#logout-pending [data-send]")
        self.wait_for_path("/app/login")
        responses = call("GET", "/me/responses", token=patient)
        self.assertEqual([response["promptId"] for response in responses], [prompt["id"]])

    def test_appointment_changes_offline_are_sent_and_a_conflict_is_reported(self):
        driver = self.driver
        suffix = uuid.uuid4().hex[:8]
        address = f"offline-appointments-{suffix}@example.org"
        patient = patient_token(address, "a long enough password")
        # Appointments are kept with a therapist.
        pair(patient, staff_token(f"offline-appointments-therapist-{suffix}@example.org", "therapist", "a long enough password"))
        starts = datetime.datetime.now(VIENNA).replace(hour=10, minute=0, second=0, microsecond=0) + datetime.timedelta(days=3)
        session = call("POST", "/me/appointments", {
            "title": "Session", "startsAt": starts.isoformat(), "endsAt": (starts + datetime.timedelta(minutes=50)).isoformat(),
        }, token=patient)

        self.app_sign_in(address, "a long enough password")
        self.wait_for_service_worker()
        self.open("/app/appointments")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#appointments-list li")) == 1)

        self.set_offline(True)
        self.open("/app/appointments")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#appointments-list li")) == 1)
        # A new appointment and an edit of the existing one, both without a connection.
        day = (starts + datetime.timedelta(days=1)).date().isoformat()
        self.fill("appointment-title", "Offline session")
        driver.execute_script("arguments[0].value = arguments[1]", driver.find_element(By.ID, "appointment-date"), day)
        driver.execute_script("arguments[0].value = '09:00'", driver.find_element(By.ID, "appointment-start"))
        driver.execute_script("arguments[0].value = '09:50'", driver.find_element(By.ID, "appointment-end"))
        self.click("form[data-form=appointment] button[type=submit]")
        self.wait_for_text("#outbox-status", "1 change waits")
        self.click(f"#appointments-list li[data-id='{session['id']}'] [data-action=edit]")
        self.fill("appointment-title", "Renamed on the phone")
        self.click("form[data-form=appointment] button[type=submit]")
        self.wait_for_text("#outbox-status", "2 changes wait")
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "#appointments-list .badge.requested")), 2)

        # Meanwhile another device changes the same appointment.
        call("PATCH", f"/me/appointments/{session['id']}", {
            "baseVersion": session["version"], "title": "Renamed on the tablet", "startsAt": session["startsAt"], "endsAt": session["endsAt"],
        }, token=patient)

        self.set_offline(False)
        driver.execute_script("window.dispatchEvent(new Event('online'))")
        self.wait.until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "#outbox-status")))
        self.wait_for_text("#outbox-reports", "changed elsewhere")
        titles = sorted(item["title"] for item in call("GET", "/me/appointments", token=patient))
        self.assertEqual(titles, ["Offline session", "Renamed on the tablet"])
        self.wait.until(lambda driver: "Renamed on the tablet" in driver.find_element(By.ID, "appointments-list").text)


if __name__ == "__main__":
    unittest.main()

    def kept_api_reads(self):
        """The API answers the service worker keeps for offline use."""
        return self.driver.execute_async_script("""
            const done = arguments[0];
            caches.keys()
              .then((names) => Promise.all(names.map((name) => caches.open(name).then((cache) => cache.keys()))))
              .then((lists) => done(lists.flat().map((key) => new URL(key.url).pathname).filter((path) => path.startsWith("/api/"))));
        """)

    def test_kept_reads_are_forgotten_on_sign_out_and_when_the_session_ends(self):
        suffix = uuid.uuid4().hex[:8]
        address = f"shared-device-{suffix}@example.org"
        patient_token(address, "a long enough password")

        def sign_in():
            self.open("/app/login")
            self.fill("email", address)
            self.fill("password", "a long enough password")
            self.click("form[data-form=login] button[type=submit]")
            self.wait_for_path("/app")
            self.wait_for_service_worker()
            self.open("/app/questionnaires")
            self.wait.until(lambda driver: "/api/v1/me/prompts" in self.kept_api_reads())

        # Signing out on a shared device leaves nothing of the person's reads behind.
        sign_in()
        self.open("/app/profile")
        self.click("[data-action=logout]")
        self.wait_for_path("/app/login")
        self.wait.until(lambda driver: self.kept_api_reads() == [])

        # A session the server ended (signed out elsewhere, or expired) is forgotten at the first 401.
        sign_in()
        token = self.driver.execute_script("return localStorage.getItem('interlude.token')")
        call("DELETE", "/sessions/current", token=token)
        self.open("/app/questionnaires")
        self.wait_for_path("/app/login")
        self.wait.until(lambda driver: self.kept_api_reads() == [])

