"""Moods and health data of the Anima demo in a real browser on a phone-sized screen.

A mood cannot be saved before the slider is moved (it suggests no answer); moved with the keyboard it is saved,
listed, changed and deleted after a confirmation. The health data page lists what the study asks for with its
reasons; switching a kind off after confirming deletes its measurements on the server; a CSV file is uploaded and
read by the server, the page following it to the end; the daily chart is drawn. The page never scrolls sideways.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import datetime
import os
import tempfile

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, demo, sign_in


class HealthDataTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.driver.set_window_size(360, 740)
        self.account = demo("anima")["patient"]
        self.token = sign_in(self.account)
        self.app_sign_in(*self.account)

    def no_sideways_scrolling(self):
        width, scroll = self.driver.execute_script(
            "return [document.documentElement.clientWidth, document.documentElement.scrollWidth]")
        self.assertLessEqual(scroll, width)

    def test_a_mood_is_chosen_on_the_slider_saved_changed_and_deleted(self):
        driver = self.driver
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "li[data-record=mood] a")))
        self.assertTrue(driver.find_element(By.ID, "health-data-tile").is_displayed())
        self.open("/app/moods")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#moods-list li")) == 31)
        self.click("form[data-form=mood] button[type=submit]")
        self.wait_for_text("[data-for=valence]", "Move the slider")
        self.assertEqual(len(call("GET", "/me/moods", token=self.token)), 31, "nothing was sent")

        slider = driver.find_element(By.ID, "mood-valence")
        slider.send_keys(Keys.END)
        self.assertEqual(slider.get_attribute("aria-valuetext"), "100 of 100")
        driver.find_element(By.ID, "mood-note").send_keys("Sunny walk")
        self.click("form[data-form=mood] button[type=submit]")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#moods-list li")) == 32)
        moods = call("GET", "/me/moods", token=self.token)
        self.assertEqual((moods[0]["valence"], moods[0]["note"]), (1, "Sunny walk"))
        self.no_sideways_scrolling()

        self.click(f"#moods-list li[data-id='{moods[0]['id']}'] button[data-action=edit]")
        slider.send_keys(Keys.HOME)
        self.click("form[data-form=mood] button[type=submit]")
        self.wait.until(lambda driver: call("GET", "/me/moods", token=self.token)[0]["valence"] == 0)

        driver.execute_script("window.confirm = () => false")
        self.click(f"#moods-list li[data-id='{moods[0]['id']}'] button[data-action=delete]")
        self.assertEqual(len(call("GET", "/me/moods", token=self.token)), 32, "a refused confirmation deletes nothing")
        driver.execute_script("window.confirm = () => true")
        self.click(f"#moods-list li[data-id='{moods[0]['id']}'] button[data-action=delete]")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#moods-list li")) == 31)

    def test_switching_a_kind_off_and_importing_a_file(self):
        driver = self.driver
        self.open("/app/health-data")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#sample-types li")) == 11)
        self.assertIn("steps a day", driver.find_element(By.CSS_SELECTOR, "#sample-types li[data-type=stepCount]").text)
        self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#sample-chart svg title")))
        self.no_sideways_scrolling()

        driver.execute_script("window.confirm = () => true")
        self.click("#enable-stepCount")
        self.wait.until(lambda driver: next(t for t in call("GET", "/me/sample-types", token=self.token)
                                            if t["type"] == "stepCount")["count"] == 0)
        self.wait_for_text("#sample-types li[data-type=stepCount]", "0 on the server")

        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        call("POST", "/me/moods", {"id": "5d3f0c52-7a8e-4c55-9d0b-3c1f7e2a9b10", "valence": 0.5,
                                   "recordedAt": now.isoformat().replace("+00:00", "Z")}, token=self.token)
        start = (now - datetime.timedelta(hours=1)).isoformat().replace("+00:00", "Z")
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as handle:
            handle.write(f"type,value,unit,start,end\nbodyMass,70,kg,{start},{start}\nheartRate,66,count/min,{start},{start}\n")
        try:
            driver.find_element(By.ID, "import-file").send_keys(handle.name)
            self.click("form[data-form=health-import] button[type=submit]")
            self.wait_for_text("#import-result", "1 new measurements kept")
        finally:
            os.unlink(handle.name)
        self.assertIn("1 of kinds switched off", driver.find_element(By.ID, "import-result").text)
