"""What the browser tests share: a headless Chromium, the server's outbox, and helpers for the console and the
patient app. Run through scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, SERVER_LOG and CHROMIUM set."""
import json
import os
import re
import sys
import unittest

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from interlude_e2e import BASE  # noqa: E402  (the path is set just above)

def make_driver(arguments=(), network_log=False):
    """A headless Chromium; with `network_log`, every request the pages send is kept for `network_requests`."""
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=420,900", "--lang=en-GB",
                     *arguments):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": "en-GB,en"})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", **({"performance": "ALL"} if network_log else {})})
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.implicitly_wait(0)
    return driver


def admin_credentials():
    """The first admin's sign-in, from the file the server writes at first start (never to its log)."""
    with open(os.path.join(os.environ["INTERLUDE_DATA_DIR"], "first-admin.txt"), encoding="utf-8") as handle:
        text = handle.read()
    address = re.search(r"Email:\s+(\S+)", text).group(1)
    password = re.search(r"One-time password:\s+(\S+)", text).group(1)
    return address, password


class BrowserTestCase(unittest.TestCase):
    def setUp(self, driver=None):
        self.driver = driver or make_driver()
        # Pages re-render while the app loads data or navigates; an element gone stale (which Chromium sometimes
        # reports as a node that "does not belong to the document") is simply looked up again.
        self.wait = WebDriverWait(
            self.driver, 15,
            ignored_exceptions=(NoSuchElementException, StaleElementReferenceException, WebDriverException))

    def tearDown(self):
        logs = self.driver.get_log("browser") if hasattr(self.driver, "get_log") else []
        # Refused API calls are expected in the story; script errors and policy violations are not.
        severe = [entry for entry in logs if entry.get("level") == "SEVERE" and entry.get("source") != "network"]
        self.driver.quit()
        self.assertEqual(severe, [], "the browser reported errors (for example a blocked inline script)")

    # helpers

    @staticmethod
    def artefact(name):
        """Where a screenshot the run keeps goes: TEST_ARTEFACTS, or .build/test-artefacts."""
        directory = os.environ.get("TEST_ARTEFACTS") or os.path.join(
            os.path.dirname(__file__), "..", "..", ".build", "test-artefacts")
        os.makedirs(directory, exist_ok=True)
        return os.path.join(directory, name)

    def wait_for_service_worker(self):
        """Waits until the service worker controls the page. A worker can be active before it has claimed the
        page it was installed from; a page loaded after that is always controlled, so the page is loaded again."""
        self.driver.execute_async_script("navigator.serviceWorker.ready.then(() => arguments[0](true))")
        if not self.driver.execute_script("return Boolean(navigator.serviceWorker.controller)"):
            self.driver.refresh()
        self.wait.until(lambda driver: driver.execute_script("return Boolean(navigator.serviceWorker.controller)"))

    def network_requests(self):
        """Every request sent since the last call, as the DevTools protocol saw it leave (a driver made with
        `network_log`): url, method, headers and any body."""
        requests = []
        for entry in self.driver.get_log("performance"):
            event = json.loads(entry["message"])["message"]
            if event.get("method") == "Network.requestWillBeSent":
                requests.append(event["params"]["request"])
        return requests

    def open(self, path):
        self.driver.get(BASE + path)

    def fill(self, field_id, value):
        element = self.wait.until(EC.element_to_be_clickable((By.ID, field_id)))
        element.clear()
        element.send_keys(value)

    def click(self, selector):
        """Clicks the element the selector names once it can be clicked. A list the page draws again between
        finding the element and clicking it (after a save, when the new data arrives) is searched again."""
        def clicked(driver):
            element = driver.find_element(By.CSS_SELECTOR, selector)
            if not (element.is_displayed() and element.is_enabled()):
                return False
            # Keep the element clear of the bars at the bottom of the screen (a questionnaire's actions, the tab bar).
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
            element.click()
            return True
        self.wait.until(clicked)

    def tap(self, element):
        """Clicks an element already found, brought to the middle of the screen first: the patient app's tab bar
        covers the bottom of a phone's screen, where an element merely scrolled into view may sit."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def wait_for_path(self, path):
        self.wait.until(lambda driver: driver.current_url.split("?")[0].endswith(path))

    def wait_for_text(self, selector, text):
        self.wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, selector), text))

    def app_sign_in(self, address, password):
        self.open("/app/login")
        self.fill("email", address)
        self.fill("password", password)
        self.click("form[data-form=login] button[type=submit]")
        self.wait_for_path("/app")

    def console_sign_in(self, address, password):
        """Signs in and waits to be let in: a page opened before the session cookie arrives would be the login page."""
        self.open("/console/login")
        self.fill("email", address)
        self.fill("password", password)
        self.click("main button[type=submit]")
        self.wait.until(lambda driver: "/console/login" not in driver.current_url)

    def console_change_password(self, current, new):
        self.wait_for_path("/console/password")
        self.fill("currentPassword", current)
        self.fill("newPassword", new)
        self.fill("repeatPassword", new)
        self.click("main button[type=submit]")

    def console_sign_out(self):
        self.click("header form button[type=submit]")
        self.wait_for_path("/console/login")

    # the story
