"""The health record of the TinnitusNavigator demo in a real browser on a phone-sized screen.

The patient enters a hearing test with one thumb: steps of 5 dB with the buttons, a typed value refused in the page
when it is off the 5 dB grid, "no response" for a frequency, a custom frequency, the left ear on its own grid. The
measurement reaches the server exactly as entered, and its chart (drawn by the server), data table and comparison
with an earlier test are shown without the page scrolling sideways. Events are searched and filtered by type;
therapies come grouped by type, the ongoing one first. Events recorded and changed without a connection wait in the
outbox and go out when it returns; a change another device made meanwhile wins and the person is told.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import datetime
import unittest
from zoneinfo import ZoneInfo

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, demo, sign_in

VIENNA = ZoneInfo("Europe/Vienna")


class HealthRecordTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.driver.set_window_size(360, 740)
        self.account = demo("tinnitus-navigator")["patient"]
        self.token = sign_in(self.account)
        self.app_sign_in(*self.account)

    def set_value(self, element_id, value):
        element = self.wait.until(EC.presence_of_element_located((By.ID, element_id)))
        self.driver.execute_script(
            "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", element, value)

    def grid_row(self, ear, frequency):
        return self.driver.find_element(
            By.CSS_SELECTOR, f"table.threshold-grid[data-ear={ear}][data-conduction=air] tr[data-frequency='{frequency}']")

    def no_sideways_scrolling(self):
        width, scroll = self.driver.execute_script(
            "return [document.documentElement.clientWidth, document.documentElement.scrollWidth]")
        wide = self.driver.execute_script(
            "return [...document.querySelectorAll('main *')]"
            ".filter((node) => node.getBoundingClientRect().right > document.documentElement.clientWidth + 1)"
            ".slice(0, 3).map((node) => node.tagName + '.' + node.className)")
        self.assertLessEqual(scroll, width, f"the page is wider than the phone's screen: {wide}")

    def test_home_shows_the_records_the_study_collects(self):
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "li[data-record=audiogram] a")))
        for kind in ("event", "therapy", "audiogram"):
            self.assertTrue(self.driver.find_element(By.CSS_SELECTOR, f"li[data-record={kind}]").is_displayed())

    def test_entering_an_audiogram_one_handed(self):
        driver = self.driver
        self.open("/app/audiograms")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#audiograms-list li")) == 3)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#audiogram-chart svg")))
        self.assertTrue(driver.find_elements(By.CSS_SELECTOR, "#audiogram-tables table.data-table tbody tr"))
        self.no_sideways_scrolling()

        today = datetime.datetime.now(VIENNA).date()
        self.set_value("audiogram-date", today.isoformat())
        self.set_value("audiogram-time", "09:00")
        right = lambda frequency: self.grid_row("right", frequency)
        # 1000 Hz: the first tap on "+" gives 0 dB HL, three more 15; one on "−" brings it back to 10.
        for _ in range(4):
            self.click("table[data-ear=right][data-conduction=air] tr[data-frequency='1000'] button[data-step='5']")
        self.click("table[data-ear=right][data-conduction=air] tr[data-frequency='1000'] button[data-step='-5']")
        self.assertEqual(right(1000).find_element(By.CSS_SELECTOR, "input[type=number]").get_attribute("value"), "10")
        right(4000).find_element(By.CSS_SELECTOR, "input[type=number]").send_keys("33")
        self.click("table[data-ear=right][data-conduction=air] tr[data-frequency='8000'] input[data-role=no-response]")
        self.set_value("custom-frequency", "6000")
        self.click("[data-action=add-frequency]")
        self.wait.until(lambda driver: right(6000))
        right(6000).find_element(By.CSS_SELECTOR, "input[type=number]").send_keys("40")
        self.assertEqual(right(1000).find_element(By.CSS_SELECTOR, "input[type=number]").get_attribute("value"), "10")

        # The left ear has a grid of its own.
        self.click("button[data-ear=left]")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "table[data-ear=left][data-conduction=air]")))
        self.assertFalse(driver.find_element(By.CSS_SELECTOR, "table[data-ear=right][data-conduction=air]").is_displayed())
        for _ in range(5):
            self.click("table[data-ear=left][data-conduction=air] tr[data-frequency='500'] button[data-step='5']")
        self.no_sideways_scrolling()

        # 33 dB is off the 5 dB grid: refused in the page, beside its row, with the right ear shown again.
        self.click("form[data-form=audiogram] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located(
            (By.CSS_SELECTOR, "table[data-ear=right][data-conduction=air] tr[data-frequency='4000'] .error")))
        self.assertIn("steps of 5", right(4000).find_element(By.CSS_SELECTOR, ".error").text)
        self.assertEqual(len(call("GET", "/me/audiograms", token=self.token)), 3)

        field = right(4000).find_element(By.CSS_SELECTOR, "input[type=number]")
        field.clear()
        field.send_keys("35")
        self.click("form[data-form=audiogram] button[type=submit]")
        self.wait_for_text("#records-status", "saved")
        stored = call("GET", "/me/audiograms", token=self.token)
        self.assertEqual(len(stored), 4)
        local = lambda item: datetime.datetime.fromisoformat(item["measuredAt"].replace("Z", "+00:00")).astimezone(VIENNA)
        entered = next(item for item in stored if local(item).date() == today and local(item).strftime("%H:%M") == "09:00")
        points = {(point["ear"], point["frequencyHz"]): point.get("thresholdDbHL") for point in entered["points"]}
        self.assertEqual(points, {("right", 1000): 10, ("right", 4000): 35, ("right", 6000): 40, ("right", 8000): None,
                                  ("left", 500): 20})

        # The new one is shown: the server's chart, its table, and a comparison with the first test.
        self.wait.until(lambda driver: driver.find_element(By.ID, "view-heading").text != "")
        self.wait.until(lambda driver: "6000 Hz" in driver.find_element(By.ID, "audiogram-tables").text)
        first = stored[-1]["id"]
        driver.execute_script(
            "const select = document.getElementById('view-compare'); select.value = arguments[0];"
            "select.dispatchEvent(new Event('change'))", first)
        self.wait.until(lambda driver: "compared with" in driver.find_element(By.CSS_SELECTOR, "#audiogram-chart svg title").get_attribute("textContent"))
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "#audiogram-tables table.data-table")), 2)
        self.no_sideways_scrolling()

    def test_events_are_searched_and_filtered_and_therapies_grouped(self):
        driver = self.driver
        self.open("/app/events")
        listed = lambda: driver.find_elements(By.CSS_SELECTOR, "#events-list li")
        self.wait.until(lambda driver: len(listed()) == 5)
        self.fill("events-search", "attack")
        self.wait.until(lambda driver: len(listed()) == 2)
        self.fill("events-search", "")
        driver.execute_script(
            "const select = document.getElementById('events-filter'); select.value = 'Hearing test';"
            "select.dispatchEvent(new Event('change'))")
        self.wait.until(lambda driver: len(listed()) == 1)
        self.assertIn("Follow-up hearing test", listed()[0].text)
        self.no_sideways_scrolling()

        self.open("/app/therapies")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, ".therapy-group")) == 2)
        groups = driver.find_elements(By.CSS_SELECTOR, ".therapy-group")
        self.assertEqual([group.get_attribute("data-type") for group in groups], ["retrainingTherapy", "medicalTreatment"])
        self.assertIn("ongoing", groups[0].text)

    def set_offline(self, offline):
        self.driver.set_network_conditions(
            offline=offline, latency=5, download_throughput=1024 * 1024, upload_throughput=1024 * 1024)

    def test_events_recorded_and_changed_offline_are_sent_and_a_conflict_is_reported(self):
        driver = self.driver
        self.wait_for_service_worker()
        self.open("/app/events")
        listed = lambda: driver.find_elements(By.CSS_SELECTOR, "#events-list li")
        self.wait.until(lambda driver: len(listed()) == 5)
        latest = call("GET", "/me/events", token=self.token)[0]
        try:
            self.set_offline(True)
            self.open("/app/events")
            self.wait.until(lambda driver: len(listed()) == 5)
            self.fill("event-title", "Ringing on the night train")
            self.set_value("event-date", datetime.datetime.now(VIENNA).date().isoformat())
            self.set_value("event-time", "23:10")
            driver.execute_script("document.getElementById('event-type').value = 'tinnitusAttack'")
            self.click("form[data-form=event] button[type=submit]")
            self.wait_for_text("#outbox-status", "1 change waits")
            self.click(f"#events-list li[data-id='{latest['id']}'] [data-action=edit]")
            self.fill("event-title", "Renamed on the phone")
            self.click("form[data-form=event] button[type=submit]")
            self.wait_for_text("#outbox-status", "2 changes wait")
            self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#events-list .badge.requested")) == 2)
            self.assertEqual(len(listed()), 6)

            # Meanwhile another device changes the same event.
            call("PATCH", f"/me/events/{latest['id']}", {
                "baseVersion": latest["version"], "title": "Renamed on the tablet", "occurredAt": latest["occurredAt"],
                "type": latest["type"],
            }, token=self.token)
        finally:
            self.set_offline(False)
        driver.execute_script("window.dispatchEvent(new Event('online'))")
        self.wait.until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "#outbox-status")))
        self.wait_for_text("#outbox-reports", "changed elsewhere")
        titles = [event["title"] for event in call("GET", "/me/events", token=self.token)]
        self.assertIn("Ringing on the night train", titles)
        self.assertIn("Renamed on the tablet", titles)
        self.assertNotIn("Renamed on the phone", titles)
        self.wait.until(lambda driver: "Renamed on the tablet" in driver.find_element(By.ID, "events-list").text)


if __name__ == "__main__":
    unittest.main()
