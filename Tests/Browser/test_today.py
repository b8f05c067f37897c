"""The patient's home as their day, on a 360 × 740 phone in English and German, for each kind of person: a
therapy client, a study participant, someone who is both, and someone who is neither yet. The home shows what is
due with its deadline, the next session, an unseen message's first line and the week; it never scrolls sideways,
and the German home holds no text of the English catalogue.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import datetime
import json
import os
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import answers_for, call, iso, pair, patient_token, staff_token

PASSWORD = "a long enough password"
PHONE = (360, 740)
LOCALES = os.path.join(os.path.dirname(__file__), "..", "..", "Resources", "Locales")


def english_only_texts():
    """The English catalogue's sentences that German says otherwise: none may show on a German page."""
    with open(os.path.join(LOCALES, "en.json"), encoding="utf-8") as handle:
        english = json.load(handle)
    with open(os.path.join(LOCALES, "de.json"), encoding="utf-8") as handle:
        german = json.load(handle)
    texts = set()
    for key, text in english.items():
        fixed = text.split("{")[0].strip()
        if key in german and german[key] != text and " " in fixed and len(fixed) >= 12:
            texts.add(fixed)
    return texts


def session_times():
    """A 50-minute session tomorrow, on the five-minute grid."""
    start = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0) + datetime.timedelta(hours=26)
    start -= datetime.timedelta(minutes=start.minute % 5)
    return start.isoformat(), (start + datetime.timedelta(minutes=50)).isoformat()


def two_line_message():
    first = f"Remember the breathing exercise {uuid.uuid4().hex[:6]}."
    return first, f"{first}\nTry it twice a day, for five minutes."


class TodayTest(BrowserTestCase):
    @classmethod
    def setUpClass(cls):
        suffix = uuid.uuid4().hex[:8]
        cls.therapist = staff_token(f"today-therapist-{suffix}@example.org", "therapist", PASSWORD)
        researcher = staff_token(f"today-researcher-{suffix}@example.org", "researcher", PASSWORD)
        cls.study = call("POST", "/studies", {
            "title": "Everyday stress", "description": "Two weeks of short questionnaires.", "consentText": "I agree.",
            "consentVersion": "today-1", "joinMode": "open", "status": "running",
        }, token=researcher)["id"]
        # Joining opens the GAD-7 once; answering it sends a message and opens the WHO-5 for a day.
        call("POST", f"/studies/{cls.study}/plans", {
            "instrumentKey": "gad-7", "durationMinutes": 10080, "pattern": {"kind": "once"}}, token=researcher)
        cls.study_first, text = two_line_message()
        for action in ({"kind": "intervention", "interventionKind": "task", "text": text},
                       {"kind": "prompt", "instrumentKey": "who-5", "openHours": 24}):
            call("POST", f"/studies/{cls.study}/rules", {
                "name": f"After the GAD-7 ({action['kind']})",
                "trigger": {"kind": "submitted", "instrumentKey": "gad-7", "condition": {"mode": "all", "clauses": []}},
                "action": action}, token=researcher)

    def setUp(self):
        super().setUp()
        self.driver.set_window_size(*PHONE)

    def person(self, kind, locale):
        """A new account of `kind` in `locale`; answers its address and what its home must show."""
        address = f"today-{kind}-{locale}-{uuid.uuid4().hex[:6]}@example.org"
        patient = patient_token(address, PASSWORD, locale=locale)
        expected = {"due": [], "appointment": None, "message": None, "answered": 0}
        if kind in ("participant", "both"):
            call("POST", f"/studies/{self.study}/enrollment", {"consentVersion": "today-1"}, token=patient)
            prompt = call("GET", "/me/prompts", token=patient)[0]
            definition = call("GET", f"/me/prompts/{prompt['id']}", token=patient)["definition"]
            call("POST", "/me/responses", {
                "id": str(uuid.uuid4()), "promptId": prompt["id"], "instrumentKey": prompt["instrumentKey"],
                "version": prompt["instrumentVersion"], "answers": answers_for(definition), "startedAt": iso(-1),
                "completedAt": iso()}, token=patient)
            expected["due"].append("WHO-5")
            expected["message"] = self.study_first
            expected["answered"] = 1
        if kind in ("client", "both"):
            patient_id = pair(patient, self.therapist)
            call("POST", f"/patients/{patient_id}/prompts", {
                "instrumentKey": "phq-9", "opensAt": iso(), "closesAt": iso(180)}, token=self.therapist)
            starts, ends = session_times()
            call("POST", f"/patients/{patient_id}/appointments", {
                "title": "Session with Dr. Berger", "startsAt": starts, "endsAt": ends}, token=self.therapist)
            first, text = two_line_message()
            call("POST", f"/patients/{patient_id}/interventions", {"kind": "task", "text": text}, token=self.therapist)
            expected["message"] = first
            expected["appointment"] = "Session with Dr. Berger"
            expected["due"].append("PHQ-9")
        return address, expected

    def sign_in_in(self, address, locale):
        self.driver.delete_all_cookies()
        self.open("/app/login")
        self.driver.add_cookie({"name": "lang", "value": locale, "path": "/"})
        self.app_sign_in(address, PASSWORD)
        self.wait.until(lambda driver: driver.execute_script(
            "return document.getElementById('week-section') && !document.getElementById('week-section').hidden"))

    def check_page(self, label, locale):
        width = self.driver.execute_script("return document.documentElement.scrollWidth")
        self.assertLessEqual(width, PHONE[0], f"{label}: the home scrolls sideways ({width}px)")
        if locale == "de":
            shown = self.driver.execute_script("return document.body.innerText")
            leaked = sorted(text for text in english_only_texts() if text in shown)
            self.assertEqual(leaked, [], f"{label}: English on the German home")

    def texts(self, selector):
        return [element.text for element in self.driver.find_elements(By.CSS_SELECTOR, selector)]

    def test_each_kind_of_person_sees_their_day(self):
        until = {"en": "until ", "de": "bis "}
        for kind in ("client", "participant", "both", "neither"):
            for locale in ("en", "de"):
                with self.subTest(kind=kind, locale=locale):
                    address, expected = self.person(kind, locale)
                    self.sign_in_in(address, locale)
                    label = f"{kind} [{locale}]"
                    due = self.texts("#due-list li")
                    self.assertEqual(len(due), len(expected["due"]), f"{label}: {due}")
                    # Each questionnaire by its title (which names its abbreviation in both languages) and deadline.
                    for title in expected["due"]:
                        self.assertTrue(any(title in entry and until[locale] in entry for entry in due), f"{label}: {due}")
                    self.assertEqual(
                        self.driver.find_element(By.ID, "due-none").is_displayed(), not expected["due"], label)
                    section = self.driver.find_element(By.ID, "appointment-section")
                    if expected["appointment"]:
                        self.assertIn(expected["appointment"], self.driver.find_element(By.ID, "appointment-link").text)
                        self.assertIn("50", self.driver.find_element(By.ID, "appointment-link").text)
                    else:
                        self.assertFalse(section.is_displayed(), label)
                    messages = self.texts("#message-list li")
                    if expected["message"]:
                        self.assertTrue(any(expected["message"] in entry for entry in messages), f"{label}: {messages}")
                        self.assertFalse(any("twice a day" in entry for entry in messages), f"{label}: {messages}")
                    else:
                        self.assertFalse(self.driver.find_element(By.ID, "messages-section").is_displayed(), label)
                    # Pairing is offered to whoever has neither a therapist nor a study.
                    self.assertEqual(self.driver.find_element(By.ID, "pairing-hint").is_displayed(), kind == "neither", label)
                    self.assertEqual(
                        self.driver.find_element(By.ID, "therapist-tile").is_displayed(), kind in ("client", "both"), label)
                    # The week: today's questionnaires, answered of planned.
                    self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#week-list li")), 7, label)
                    if expected["due"]:
                        today = self.driver.find_element(By.CSS_SELECTOR, "#week-list li[aria-current=date]")
                        planned = expected["answered"] + len(expected["due"])
                        self.assertIn(f"{expected['answered']}/{planned}", today.text, label)
                    else:
                        self.assertFalse(self.driver.find_element(By.ID, "week-list").is_displayed(), label)
                    # A study participant is not told of a therapist they do not have.
                    if kind == "participant":
                        self.assertNotIn({"en": "therapist", "de": "Therapeut"}[locale],
                                         self.driver.find_element(By.ID, "main").text, label)
                    # The tab bar stays at the bottom, where a thumb reaches it, its targets large enough.
                    tabs = self.driver.find_elements(By.CSS_SELECTOR, ".tabbar a")
                    self.assertEqual(len(tabs), 3, label)
                    bottom = self.driver.execute_script("return window.innerHeight")
                    for tab in tabs:
                        self.assertGreaterEqual(tab.size["height"], 44, label)
                        self.assertGreaterEqual(tab.size["width"], 44, label)
                        self.assertAlmostEqual(tab.rect["y"] + tab.rect["height"], bottom, delta=2, msg=label)
                    self.assertEqual(tabs[0].get_attribute("aria-current"), "page", label)
                    self.check_page(label, locale)
                    self.driver.save_screenshot(self.artefact(f"today-{kind}-{locale}.png"))
                    self.driver.execute_script("document.getElementById('week-section').scrollIntoView()")
                    self.driver.save_screenshot(self.artefact(f"today-{kind}-{locale}-week.png"))

    def test_the_daily_email_of_messages_is_the_default_and_can_be_changed(self):
        address = f"today-email-{uuid.uuid4().hex[:6]}@example.org"
        patient = patient_token(address, PASSWORD)
        self.sign_in_in(address, "en")
        self.open("/app/profile")
        daily = self.wait.until(EC.presence_of_element_located((By.ID, "pref-message-emails-daily")))
        self.wait.until(lambda driver: daily.is_selected())
        self.click("label[for=pref-message-emails-each]")
        self.click("form[data-form=notification-preferences] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located(
            (By.CSS_SELECTOR, "form[data-form=notification-preferences] [data-success]")))
        self.assertEqual(call("GET", "/me/notification-preferences", token=patient)["messageEmails"], "each")

if __name__ == "__main__":
    import unittest
    unittest.main()
