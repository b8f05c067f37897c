"""Recording a thought through the defusion exercise in a real browser on a phone-sized screen.

Neither rating can be skipped (the sliders suggest nothing). On the exercise's stage a tap sends the words to the
tapped point and two fingers spread apart make them bigger (touch emulated through WebDriver's touch pointers);
everything works from the keyboard too: the arrow keys, + and ], F and C on the words, Enter on the buttons. The
same words in another case add to the first thought; deleting asks first. The page never scrolls sideways. On the
profile, the iACT client chooses fewer reinforcement messages in a narrower window; a number above the study's is
named beside its field.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import uuid

from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, demo, patient_token, sign_in

PASSWORD = "a long enough password"


class ThoughtsTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.driver.set_window_size(360, 740)
        address = f"thoughts-{uuid.uuid4().hex[:10]}@example.org"
        self.token = patient_token(address, PASSWORD)
        self.app_sign_in(address, PASSWORD)
        self.open("/app/thoughts")
        self.wait.until(EC.visibility_of_element_located((By.ID, "thoughts-empty")))

    def words(self):
        return self.driver.find_element(By.ID, "defusion-thought")

    def look(self, name):
        return float(self.words().get_attribute(f"data-{name}"))

    def no_sideways_scrolling(self):
        width, scroll = self.driver.execute_script(
            "return [document.documentElement.clientWidth, document.documentElement.scrollWidth]")
        self.assertLessEqual(scroll, width)

    def touch(self, *fingers):
        """Each finger a list of (x, y) points relative to the stage's middle: down at the first, up at the last."""
        stage = self.driver.find_element(By.ID, "defusion-stage")
        builder = ActionBuilder(self.driver)
        for index, path in enumerate(fingers):
            finger = builder.add_pointer_input(interaction.POINTER_TOUCH, f"finger{index}")
            finger.create_pointer_move(x=path[0][0], y=path[0][1], origin=stage)
            finger.create_pointer_down(button=0)
            for x, y in path[1:]:
                finger.create_pointer_move(duration=150, x=x, y=y, origin=stage)
            finger.create_pointer_up(button=0)
        builder.perform()

    def test_a_thought_through_the_exercise_by_touch(self):
        driver = self.driver
        self.fill("thought-text", "Nobody wants me here")
        self.click("form[data-form=thought] button[type=submit]")
        self.wait_for_text("[data-for=ratingBefore]", "Move the slider")
        self.assertFalse(driver.find_element(By.ID, "record-step").get_attribute("hidden"), "the exercise waits")

        driver.find_element(By.ID, "thought-before").send_keys(Keys.HOME)
        self.click("form[data-form=thought] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "defusion-thought")))
        self.assertEqual(self.words().text, "Nobody wants me here")
        self.no_sideways_scrolling()

        self.touch([(-90, -60)])
        self.wait.until(lambda driver: abs(self.look("x") + 90) <= 1 and abs(self.look("y") + 60) <= 1)
        self.touch([(-40, 40), (-80, 40)], [(40, 40), (80, 40)])
        self.wait.until(lambda driver: abs(self.look("scale") - 2) < 0.1)
        self.touch([(20, 20), (20, 60)], [(20, -20), (60, -20)])
        self.assertNotEqual(self.look("rotation"), 0, "two fingers turning turn the words")

        self.click("[data-action=done]")
        self.click("form[data-form=thought-after] button[type=submit]")
        self.wait_for_text("[data-for=ratingAfter]", "Move the slider")
        self.assertEqual(call("GET", "/me/thoughts", token=self.token), [], "nothing was sent")
        driver.find_element(By.ID, "thought-after").send_keys(Keys.END)
        self.click("form[data-form=thought-after] button[type=submit]")
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#thoughts-list li.card")) == 1)
        [thought] = call("GET", "/me/thoughts", token=self.token)
        occurrence = thought["occurrences"][0]
        self.assertEqual((occurrence["ratingBefore"], occurrence["ratingAfter"]), (-1, 1))
        self.assertNotIn("location", occurrence, "no place without the person asking for it")
        self.no_sideways_scrolling()

    def test_a_thought_through_the_exercise_by_keyboard_then_again_and_deleted(self):
        driver = self.driver
        text = driver.find_element(By.ID, "thought-text")
        text.send_keys("I always get it wrong")
        text.send_keys(Keys.TAB)
        slider = driver.switch_to.active_element
        self.assertEqual(slider.get_attribute("id"), "thought-before")
        slider.send_keys(Keys.ARROW_LEFT * 4)
        self.assertIn("−2 on a scale", slider.get_attribute("aria-valuetext"))
        driver.find_element(By.CSS_SELECTOR, "form[data-form=thought] button[type=submit]").send_keys(Keys.ENTER)

        self.wait.until(EC.visibility_of_element_located((By.ID, "defusion-thought")))
        self.assertEqual(driver.switch_to.active_element.get_attribute("id"), "defusion-heading")
        words = self.words()
        palette, ink = self.look("palette"), self.look("ink")
        words.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_UP, "+", "]", "f", "c")
        self.assertEqual((self.look("x"), self.look("y"), self.look("rotation"), self.look("font")), (48, -24, 15, 1))
        self.assertAlmostEqual(self.look("scale"), 1.15)
        self.assertNotEqual((self.look("palette"), self.look("ink")), (palette, ink))
        self.wait_for_text("#defusion-status", "New look")
        driver.find_element(By.CSS_SELECTOR, "[data-tool=smaller]").send_keys(Keys.ENTER)
        self.assertAlmostEqual(self.look("scale"), 1.0)
        driver.find_element(By.CSS_SELECTOR, "[data-action=done]").send_keys(Keys.ENTER)

        after = self.wait.until(EC.visibility_of_element_located((By.ID, "thought-after")))
        after.send_keys(Keys.ARROW_RIGHT * 2)
        driver.find_element(By.CSS_SELECTOR, "form[data-form=thought-after] button[type=submit]").send_keys(Keys.ENTER)
        self.wait.until(lambda driver: len(driver.find_elements(By.CSS_SELECTOR, "#thoughts-list li.card")) == 1)

        self.click("#thoughts-list li.card button[data-action=again]")
        self.assertEqual(driver.find_element(By.ID, "thought-text").get_attribute("value"), "I always get it wrong")
        self.fill("thought-text", "i ALWAYS get it  wrong")
        driver.find_element(By.ID, "thought-before").send_keys(Keys.HOME)
        self.click("form[data-form=thought] button[type=submit]")
        self.click("[data-action=done]")
        driver.find_element(By.ID, "thought-after").send_keys(Keys.HOME)
        self.click("form[data-form=thought-after] button[type=submit]")
        self.wait_for_text("#thoughts-list li.card", "Recorded 2 times")
        [thought] = call("GET", "/me/thoughts", token=self.token)
        self.assertEqual(thought["text"], "I always get it wrong")
        self.assertEqual(sorted(o["ratingBefore"] for o in thought["occurrences"]), [-1, -0.2])

        driver.execute_script("window.confirm = () => false")
        self.click("#thoughts-list li.card button[data-action=delete]")
        self.assertEqual(len(call("GET", "/me/thoughts", token=self.token)), 1, "a refused confirmation deletes nothing")
        driver.execute_script("window.confirm = () => true")
        self.click("#thoughts-list li.card button[data-action=delete]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "thoughts-empty")))
        self.assertEqual(call("GET", "/me/thoughts", token=self.token), [])


class MessageChoiceTest(BrowserTestCase):
    def test_the_client_chooses_fewer_messages_on_the_profile(self):
        driver = self.driver
        driver.set_window_size(360, 740)
        account = demo("iact")["patient"]
        token = sign_in(account)
        self.app_sign_in(*account)
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "li[data-record=thought] a[href='/app/act']")))
        self.open("/app/profile")
        form = self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#message-plans form")))
        self.assertIn("Your practice sends up to 3 a day between 09:00 and 20:00", form.text)
        per_day = form.find_element(By.NAME, "perDay")
        self.assertEqual(per_day.get_attribute("value"), "3")
        per_day.clear()
        per_day.send_keys("9")
        self.tap(form.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        self.wait.until(lambda driver: form.find_element(By.CSS_SELECTOR, "[data-for=perDay]").is_displayed())
        per_day.clear()
        per_day.send_keys("1")
        driver.execute_script("arguments[0].value = '18:00'", form.find_element(By.NAME, "windowStart"))
        driver.execute_script("arguments[0].value = '19:30'", form.find_element(By.NAME, "windowEnd"))
        self.tap(form.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        self.wait.until(lambda driver: form.find_element(By.CSS_SELECTOR, "[data-success]").is_displayed())
        [plan] = call("GET", "/me/message-plans", token=token)
        self.assertEqual(plan["choice"], {"perDay": 1, "windowStart": "18:00", "windowEnd": "19:30"})

