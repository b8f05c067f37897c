"""Context with answers in a real browser: a participant who allowed the study's context module answers the Track
Your Stress daily questionnaire with an emulated position and Chromium's fake microphone; the app shows the
position and the noise level it measured, the person leaves one of them out for the next answer, and what the
server keeps is exactly what was shown and kept. Every request the page made is inspected: no sound leaves it.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import json
import re
import unittest
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase, make_driver
from interlude_e2e import BASE, answers_for, call, patient_token, staff_token

LATITUDE, LONGITUDE, ACCURACY = 48.39841, 9.99155, 12


class ContextTest(BrowserTestCase):
    def setUp(self):
        # A microphone that plays a tone, allowed without asking, and the network log to inspect.
        self.driver = make_driver(
            arguments=("--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"), network_log=True)
        super().setUp(driver=self.driver)

    def prepare(self):
        suffix = uuid.uuid4().hex[:8]
        researcher = staff_token(f"context-researcher-{suffix}@uni.example", "researcher", "a long enough password")
        study = call("POST", "/studies", {
            "title": f"Stress on the move {suffix}", "consentText": "I take part.", "consentVersion": "1", "joinMode": "open",
        }, token=researcher)
        call("POST", f"/studies/{study['id']}/consent-versions", {
            "version": "2", "texts": {"en": "I take part.\nMy position and the noise level are kept with my answers."},
            "modules": ["context"],
        }, token=researcher)
        for _ in range(2):
            call("POST", f"/studies/{study['id']}/plans",
                 {"instrumentKey": "tys-daily", "durationMinutes": 1440, "pattern": {"kind": "once"}}, token=researcher)
        address = f"context-patient-{suffix}@example.org"
        patient = patient_token(address, "a long enough password")
        call("POST", f"/studies/{study['id']}/enrollment", {"consentVersion": "2", "modules": {"context": True}}, token=patient)
        prompts = [item for item in call("GET", "/me/prompts", token=patient) if item["instrumentKey"] == "tys-daily"]
        self.assertEqual(len(prompts), 2, prompts)
        return address, patient, prompts

    def answer(self, prompt, definition, drop=None):
        """Opens the prompt with every answer already given on this device, waits for the context, drops one
        kind if told, submits; answers what the page showed."""
        self.driver.execute_script(
            "localStorage.setItem(arguments[0], arguments[1])", f"interlude.prompt.{prompt['id']}",
            json.dumps({"answers": answers_for(definition), "responseId": str(uuid.uuid4()), "startedAt": None}))
        self.open(f"/app/questionnaires/{prompt['id']}")
        self.wait.until(EC.visibility_of_element_located((By.ID, "context")))
        self.wait.until(lambda driver: "dBFS" in driver.find_element(By.ID, "context-noise").text)
        self.wait.until(lambda driver: " m)" in driver.find_element(By.ID, "context-location").text)
        shown = {kind: self.driver.find_element(By.ID, f"context-{kind}").text for kind in ("location", "noise")}
        if drop:
            self.click(f"#context-{drop}-keep")
            self.assertFalse(self.driver.find_element(By.ID, f"context-{drop}-keep").is_selected())
        self.click("#submit")
        self.wait.until(EC.visibility_of_element_located((By.ID, "confirm")))
        self.click("#confirm-yes")
        self.wait_for_text("#questionnaire-status", "submitted")
        return shown

    def test_position_and_noise_are_shown_kept_or_left_out_and_no_sound_leaves_the_page(self):
        driver = self.driver
        address, patient, prompts = self.prepare()
        definition = call("GET", f"/me/prompts/{prompts[0]['id']}", token=patient)["definition"]
        self.assertEqual(definition["context"], ["location", "noise"])
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": BASE, "permissions": ["geolocation", "audioCapture"]})
        driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {"latitude": LATITUDE, "longitude": LONGITUDE, "accuracy": ACCURACY})
        self.app_sign_in(address, "a long enough password")

        both = self.answer(prompts[0], definition)
        without_noise = self.answer(prompts[1], definition, drop="noise")

        self.assertEqual(both["location"], f"{LATITUDE:.4f}, {LONGITUDE:.4f} (within {ACCURACY} m)")
        level = float(re.match(r"(-?[0-9.]+) dBFS over ([0-9.]+) s", both["noise"]).group(1))
        self.assertGreater(level, -200, "the fake microphone's tone is heard")
        self.assertLess(level, 0)
        stored = {prompt["id"]: call("GET", f"/me/prompts/{prompt['id']}", token=patient)["prompt"] for prompt in prompts}
        first = call("GET", f"/responses/{stored[prompts[0]['id']]['responseId']}", token=patient)
        second = call("GET", f"/responses/{stored[prompts[1]['id']]['responseId']}", token=patient)
        self.assertAlmostEqual(first["context"]["location"]["latitude"], LATITUDE, places=5)
        self.assertAlmostEqual(first["context"]["location"]["longitude"], LONGITUDE, places=5)
        self.assertEqual(first["context"]["location"]["accuracyM"], ACCURACY)
        self.assertEqual(f"{first['context']['noise']['dbfs']:.1f}", f"{level:.1f}")
        self.assertGreaterEqual(first["context"]["noise"]["durationS"], 3)
        self.assertIn("location", second["context"])
        self.assertNotIn("noise", second["context"], "the level the person left out is not sent")

        # The two answers are on the person's results page, as a described chart with its numbers.
        self.open("/app/results")
        card = "section[data-instrument=tys-daily]"
        self.wait_for_text(f"{card} .results-summary", "2 answered")
        chart = driver.find_element(By.CSS_SELECTOR, f"{card} svg[role=img]")
        self.assertEqual(chart.find_element(By.TAG_NAME, "title").get_attribute("textContent"), "Stress level")
        self.assertIn("2 values", chart.find_element(By.TAG_NAME, "desc").get_attribute("textContent"))
        self.assertTrue(driver.find_element(By.ID, "comparison").get_attribute("hidden"), "the study shows no comparison")

        # What left the page: requests to this server only, none carrying sound, and the answers' bodies
        # holding the numbers shown and nothing else of the microphone.
        requests = self.network_requests()
        self.assertTrue(requests)
        for request in requests:
            self.assertTrue(request["url"].startswith(BASE) or request["url"].startswith("data:"), request["url"])
            content_type = {name.lower(): value for name, value in request.get("headers", {}).items()}.get("content-type", "")
            self.assertNotRegex(content_type, r"audio|video|octet-stream|multipart", request["url"])
            self.assertLess(len(request.get("postData") or ""), 4096, request["url"])
        submitted = [json.loads(request["postData"]) for request in requests
                     if request["method"] == "POST" and request["url"].endswith("/api/v1/me/responses")]
        self.assertEqual(len(submitted), 2)
        self.assertEqual(set(submitted[0]["context"]), {"location", "noise"})
        self.assertEqual(set(submitted[0]["context"]["noise"]), {"dbfs", "durationS", "capturedAt"})
        self.assertEqual(set(submitted[1]["context"]), {"location"})


if __name__ == "__main__":
    unittest.main()
