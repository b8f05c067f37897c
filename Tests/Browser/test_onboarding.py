"""The whole first-day story in a real browser (headless Chromium through selenium).

The admin signs in with the one-time password printed at first start and creates a therapist; the therapist
signs in, chooses a password and creates a pairing code; a patient registers in the patient app, confirms the
email through the link in the outbox, signs in and pairs; the therapist then sees the patient. A researcher made
with `interlude user create` opens a study, and the patient joins it.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN, SERVER_LOG and CHROMIUM set.
"""
import os
import subprocess
import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from browser_support import BrowserTestCase, admin_credentials
from interlude_e2e import link_in_outbox


class OnboardingTest(BrowserTestCase):
    def test_first_day(self):
        driver = self.driver

        # The admin signs in with the one-time password and must choose a new one.
        admin_email, one_time = admin_credentials()
        self.console_sign_in(admin_email, one_time)
        self.console_change_password(one_time, "admin passphrase for the clinic")
        self.wait_for_path("/console/users")

        # The admin creates a therapist and reads the one-time password off the page.
        self.fill("email", "berger@praxis.example")
        self.fill("name", "Dr. Anna Berger")
        Select(driver.find_element(By.ID, "role")).select_by_value("therapist")
        self.click("form[action='/console/users'] button[type=submit]")
        therapist_one_time = self.wait.until(EC.presence_of_element_located((By.ID, "one-time-password"))).text
        self.assertEqual(len(therapist_one_time), 16)
        self.console_sign_out()

        # The therapist signs in, chooses a password and creates a pairing code.
        self.console_sign_in("berger@praxis.example", therapist_one_time)
        self.console_change_password(therapist_one_time, "therapist passphrase 2026")
        self.wait_for_path("/console/patients")
        self.open("/console/pairing-codes")
        self.fill("note", "first session")
        self.click("form[action='/console/pairing-codes'] button[type=submit]")
        code = self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "tr.fresh [data-code]"))).text
        self.assertRegex(code, r"^\d{4} \d{4}$")
        self.console_sign_out()

        # A patient registers in the patient app.
        self.open("/app")
        self.click("a[href='/app/register']")
        self.wait_for_path("/app/register")
        self.fill("email", "ada@example.org")
        self.wait_for_text("#email-status", "can be used")
        self.fill("password", "my own long passphrase")
        self.fill("repeatPassword", "my own long passphrase")
        self.fill("name", "Ada")
        time_zone = driver.find_element(By.ID, "timeZone")
        time_zone.clear()
        time_zone.send_keys("Europe/Vienna")
        self.click("label[for=acceptPrivacy]")
        self.click("form[data-form=register] button[type=submit]")
        self.wait_for_path("/app/verify-pending")
        self.wait_for_text("#pending-email", "ada@example.org")

        # Signing in before confirming the address is refused with a way forward.
        self.open("/app/login")
        self.fill("email", "ada@example.org")
        self.fill("password", "my own long passphrase")
        self.click("form[data-form=login] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "unverified")))

        # The patient confirms the address through the emailed link.
        driver.get(link_in_outbox("ada@example.org", "/app/verify"))
        self.wait.until(EC.visibility_of_element_located((By.ID, "verify-done")))

        # The patient signs in and pairs with the code.
        self.open("/app/login")
        self.fill("email", "ada@example.org")
        self.fill("password", "my own long passphrase")
        self.click("form[data-form=login] button[type=submit]")
        self.wait_for_path("/app")
        self.wait.until(EC.visibility_of_element_located((By.ID, "pairing-hint")))
        self.click("#pairing-hint a")
        self.wait_for_path("/app/pairing")

        # A wrong code is refused next to the field.
        self.fill("code", "0000 0001" if code != "0000 0001" else "0000 0002")
        driver.execute_script("document.getElementById('dateOfBirth').value = '1990-05-17'")
        self.click("label[for=gender-female]")
        self.click("form[data-form=pairing] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "code-error")))
        self.assertEqual(driver.find_element(By.ID, "code").get_attribute("aria-invalid"), "true")

        self.fill("code", code)
        self.click("form[data-form=pairing] button[type=submit]")
        self.wait_for_path("/app/therapist")
        self.wait_for_text("#therapist-name", "Dr. Anna Berger")

        # The therapist sees the new patient in the caseload.
        patient_window = driver.current_window_handle
        self.console_sign_in("berger@praxis.example", "therapist passphrase 2026")
        self.wait_for_path("/console/patients")
        self.wait_for_text("main table", "Ada")
        self.assertRegex(driver.find_element(By.CSS_SELECTOR, "main table").text, r"P-[0-9A-Z]{6}")
        self.console_sign_out()
        self.assertEqual(driver.current_window_handle, patient_window)

        # A researcher created on the command line opens a study.
        subprocess.run(
            [os.environ["INTERLUDE_BIN"], "user", "create", "--email", "lab@uni.example", "--role", "researcher",
             "--name", "Study lead", "--password", "researcher passphrase 1"],
            check=True, env={**os.environ}, capture_output=True,
        )
        self.console_sign_in("lab@uni.example", "researcher passphrase 1")
        self.wait_for_path("/console/studies")
        self.click("a[href='/console/studies/new']")
        self.fill("title", "Everyday stress")
        self.fill("description", "A few questions a day.")
        self.fill("consentText", "I agree to answer questions about stress.")
        Select(driver.find_element(By.ID, "joinMode")).select_by_value("open")
        self.click("main form button[type=submit]")
        self.wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "h1"), "Everyday stress"))
        self.console_sign_out()

        # The patient joins the study after accepting its consent.
        self.open("/app/studies")
        self.wait_for_text("#studies-list", "Everyday stress")
        # Other studies of the installation are listed too: this one's card.
        card = self.driver.find_element(By.XPATH, "//section[contains(@class, 'card')][h2[text()='Everyday stress']]")
        # The consent stands in full above the box that says it was read.
        consent = card.find_element(By.CSS_SELECTOR, ".consent-text")
        self.assertTrue(consent.is_displayed())
        self.assertIn("I agree to answer questions about stress.", consent.text)
        accept = card.find_element(By.CSS_SELECTOR, ".choice label")
        self.assertLess(consent.location["y"], accept.location["y"])
        self.tap(accept)
        self.tap(card.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        self.wait.until(EC.visibility_of_element_located((By.ID, "studies-status")))
        self.wait_for_text("#studies-list", "Taking part")

    def test_password_reset_profile_and_deletion(self):
        driver = self.driver
        # Register and confirm through the app.
        self.open("/app/register")
        self.fill("email", "bea@example.org")
        self.fill("password", "first passphrase here")
        self.fill("repeatPassword", "first passphrase here")
        self.click("label[for=acceptPrivacy]")
        self.click("form[data-form=register] button[type=submit]")
        self.wait_for_path("/app/verify-pending")
        driver.get(link_in_outbox("bea@example.org", "/app/verify"))
        self.wait.until(EC.visibility_of_element_located((By.ID, "verify-done")))

        # Forgot the password: the reset link from the outbox sets a new one.
        self.open("/app/forgot-password")
        self.fill("email", "bea@example.org")
        self.click("form[data-form=forgot-password] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-success]")))
        driver.get(link_in_outbox("bea@example.org", "/app/reset-password"))
        self.fill("newPassword", "second passphrase here")
        self.fill("repeatPassword", "second passphrase here")
        self.click("form[data-form=reset-password] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-success]")))

        self.open("/app/login")
        self.fill("email", "bea@example.org")
        self.fill("password", "second passphrase here")
        self.click("form[data-form=login] button[type=submit]")
        self.wait_for_path("/app")

        # The profile shows the account; switching the language reloads the page in German.
        self.open("/app/profile")
        self.wait_for_text("#profile-email", "bea@example.org")
        self.fill("name", "Bea")
        Select(driver.find_element(By.ID, "locale")).select_by_value("de")
        self.click("form[data-form=profile] button[type=submit]")
        self.wait.until(lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de")
        self.wait_for_text("h1", "Ihr Profil")
        self.wait.until(lambda d: d.find_element(By.ID, "name").get_attribute("value") == "Bea")

        # A wrong current password is refused beside the field.
        self.fill("currentPassword", "not the password")
        self.fill("newPassword", "third passphrase here")
        self.fill("repeatPassword", "third passphrase here")
        self.click("form[data-form=change-password] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "currentPassword-error")))

        # Deleting the account needs the confirmation and the password, then nothing is left to sign in to.
        self.click("form[data-form=delete-account] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "confirmDelete-error")))
        self.click("label[for=confirmDelete]")
        self.fill("delete-password", "second passphrase here")
        self.click("form[data-form=delete-account] button[type=submit]")
        self.wait_for_path("/app")
        self.wait.until(EC.visibility_of_element_located((By.ID, "deleted-notice")))
        self.open("/app/login")
        self.fill("email", "bea@example.org")
        self.fill("password", "second passphrase here")
        self.click("form[data-form=login] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-summary]")))
        self.assertTrue(driver.current_url.split("?")[0].endswith("/app/login"))

    def test_migrate_command_prepares_an_empty_data_directory(self):
        import sqlite3
        import tempfile

        with tempfile.TemporaryDirectory() as directory:
            result = subprocess.run(
                [os.environ["INTERLUDE_BIN"], "migrate"],
                env={**os.environ, "INTERLUDE_DATA_DIR": directory}, capture_output=True, text=True,
            )
            self.assertEqual(result.returncode, 0, result.stderr)
            with sqlite3.connect(os.path.join(directory, "interlude.sqlite")) as database:
                tables = {row[0] for row in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                self.assertTrue({"users", "studies", "pairing_codes", "audit_events"} <= tables)
                self.assertEqual(database.execute("SELECT COUNT(*) FROM users").fetchone()[0], 0)

    def test_german_patient_app_and_installability(self):
        driver = self.driver
        self.open("/language?set=de&next=/app/register")
        self.wait_for_path("/app/register")
        self.assertEqual(driver.find_element(By.TAG_NAME, "html").get_attribute("lang"), "de")
        self.assertIn("Konto anlegen", driver.find_element(By.TAG_NAME, "h1").text)
        # Submitting an empty form marks the fields and moves focus to the summary.
        self.click("form[data-form=register] button[type=submit]")
        summary = self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, "[data-summary]")))
        self.assertEqual(driver.switch_to.active_element, summary)
        self.assertEqual(driver.find_element(By.ID, "email").get_attribute("aria-invalid"), "true")
        # Every input has a label.
        unlabelled = driver.execute_script(
            "return [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]"
            ".filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.name)"
        )
        self.assertEqual(unlabelled, [])
        manifest = driver.execute_async_script(
            "const done = arguments[0];"
            "fetch(document.querySelector('link[rel=manifest]').href).then(r => r.json()).then(done)"
        )
        self.assertEqual(manifest["start_url"], "/app")
        self.assertTrue(any(icon["sizes"] == "512x512" for icon in manifest["icons"]))


if __name__ == "__main__":
    unittest.main()
