"""A client's results on a 360 × 740 phone in English and German: each chart has dates along the bottom and the
scale's values at the side, written as the language writes them; a yes/no question is drawn as marks on a yes and
a no row, not as a line; no chart text is smaller than 12 px as shown; the page never scrolls sideways; and each
chart keeps its numbers in a table.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import unittest
import uuid

from selenium.webdriver.common.by import By

from browser_support import BrowserTestCase
from interlude_e2e import call, iso, pair, patient_token, staff_token

PASSWORD = "a long enough password"
PHONE = (360, 740)

# Every chart text's size as shown, from its font size and the scale the SVG is drawn at.
TEXT_SIZES = """
return [...document.querySelectorAll('#results-list svg text')].map((text) => {
  const matrix = text.getScreenCTM();
  return [parseFloat(getComputedStyle(text).fontSize) * Math.hypot(matrix.a, matrix.b), text.textContent];
});
"""


class ResultsTest(BrowserTestCase):
    @classmethod
    def setUpClass(cls):
        suffix = uuid.uuid4().hex[:8]
        cls.therapist = staff_token(f"results-therapist-{suffix}@example.org", "therapist", PASSWORD)

    def setUp(self):
        super().setUp()
        self.driver.set_window_size(*PHONE)

    def client(self, locale):
        """A therapy client in `locale` who answered the PHQ-9 once (8 points) and the daily check three times (yes, no, yes)."""
        address = f"results-{locale}-{uuid.uuid4().hex[:6]}@example.org"
        patient = patient_token(address, PASSWORD, locale=locale)
        patient_id = pair(patient, self.therapist)
        answers = [("intersession-daily", {"thought": True, "feeling": "4"}),
                   ("intersession-daily", {"thought": False}),
                   ("intersession-daily", {"thought": True, "feeling": "2"}),
                   ("phq-9", {f"phq9_{number}": "1" for number in range(1, 9)} | {"phq9_9": "0"})]
        for instrument, chosen in answers:
            call("POST", f"/patients/{patient_id}/prompts", {
                "instrumentKey": instrument, "opensAt": iso(), "closesAt": iso(180)}, token=self.therapist)
            prompt = next(prompt for prompt in call("GET", "/me/prompts", token=patient)
                          if prompt["instrumentKey"] == instrument)
            call("POST", "/me/responses", {
                "id": str(uuid.uuid4()), "promptId": prompt["id"], "instrumentKey": instrument,
                "version": prompt["instrumentVersion"], "answers": chosen, "startedAt": iso(-1), "completedAt": iso(),
            }, token=patient)
        return address

    def chart(self, instrument, title):
        card = self.driver.find_element(By.CSS_SELECTOR, f"#results-list section[data-instrument={instrument}]")
        for figure in card.find_elements(By.CSS_SELECTOR, "figure.chart-frame"):
            if figure.find_element(By.TAG_NAME, "figcaption").get_attribute("textContent") == title:
                return figure
        self.fail(f"no chart {title!r} for {instrument}")

    def axis_texts(self, figure):
        return [text.get_attribute("textContent") for text in figure.find_elements(By.CSS_SELECTOR, "svg text.result-axis")]

    def test_charts_read_on_a_phone_in_both_languages(self):
        words = {
            "en": {"thought": "Thought of therapy", "yes": "Yes", "no": "No", "middle": "13.5", "table": "Value"},
            "de": {"thought": "An die Therapie gedacht", "yes": "Ja", "no": "Nein", "middle": "13,5", "table": "Wert"},
        }
        for locale, said in words.items():
            with self.subTest(locale=locale):
                address = self.client(locale)
                self.driver.delete_all_cookies()
                self.open("/app/login")
                self.driver.add_cookie({"name": "lang", "value": locale, "path": "/"})
                self.app_sign_in(address, PASSWORD)
                self.open("/app/results")
                self.wait_for_text("#results-list section[data-instrument=phq-9] h2", "PHQ")

                # The yes/no question: a row for yes and one for no, a mark per answer, and no line between them.
                thought = self.chart("intersession-daily", said["thought"])
                self.assertEqual(self.axis_texts(thought)[:2], [said["no"], said["yes"]])
                self.assertEqual(len(thought.find_elements(By.CSS_SELECTOR, "circle.result-yes")), 2)
                self.assertEqual(len(thought.find_elements(By.CSS_SELECTOR, "circle.result-no")), 1)
                self.assertEqual(thought.find_elements(By.CSS_SELECTOR, "path.result-line"), [])

                # The PHQ-9 total on its whole scale (0 to 27, the middle in the language's decimals), with the date.
                phq = self.driver.find_element(By.CSS_SELECTOR, "#results-list section[data-instrument=phq-9] figure")
                axis = self.axis_texts(phq)
                self.assertEqual(axis[:3], ["0", said["middle"], "27"])
                self.assertEqual(len(axis), 4, f"three values and one date: {axis}")
                self.assertRegex(axis[3], r"\d")
                self.assertEqual(len(phq.find_elements(By.CSS_SELECTOR, "path.result-line")), 1)

                # Each chart's numbers stay in a table, opened by a toggle a thumb can hit.
                toggle = phq.find_element(By.CSS_SELECTOR, "details > summary")
                self.assertGreaterEqual(toggle.size["height"], 44)
                self.tap(toggle)
                header = phq.find_elements(By.CSS_SELECTOR, "table th")[1].text
                self.assertEqual(header, said["table"])
                self.assertEqual(phq.find_element(By.CSS_SELECTOR, "table tbody td:last-child").text.split(" ")[0], "8")

                sizes = self.driver.execute_script(TEXT_SIZES)
                self.assertTrue(sizes)
                small = [(round(size, 1), text) for size, text in sizes if size < 12]
                self.assertEqual(small, [], "chart text under 12 px")
                width = self.driver.execute_script("return document.documentElement.scrollWidth")
                self.assertLessEqual(width, PHONE[0], f"the results page scrolls sideways ({width}px)")


if __name__ == "__main__":
    unittest.main()
