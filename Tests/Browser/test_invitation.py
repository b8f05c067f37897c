"""A therapist invites a client by email from the console; the client opens the emailed link in the patient app,
chooses a password, gives a date of birth and a gender, and lands in the app already connected with the therapist,
who finds the client in the caseload. The link works once.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_support import BrowserTestCase
from interlude_e2e import call, link_in_outbox, staff_token

PASSWORD = "a long enough password"


class InvitationTest(BrowserTestCase):
    def test_invited_by_email_and_connected_at_once(self):
        suffix = uuid.uuid4().hex[:8]
        therapist = f"inviting-{suffix}@praxis.example"
        client = f"invited-{suffix}@example.org"
        staff_token(therapist, "therapist", PASSWORD)

        # The therapist invites the client from the pairing codes page.
        self.console_sign_in(therapist, PASSWORD)
        self.open("/console/pairing-codes")
        self.fill("invite-email", client)
        self.click("form[action='/console/invitations'] button[type=submit]")
        self.wait_for_text("#invite .notice.ok", client)

        # The client follows the link, leaves out the date of birth once, and is told so beside the field.
        link = link_in_outbox(client, "/app/invitation")
        self.driver.get(link)
        self.fill("password", PASSWORD)
        self.fill("repeatPassword", PASSWORD)
        self.fill("name", "Ada Lovelace")
        self.click("#gender-female")
        self.click("#acceptPrivacy")
        self.click("form[data-form='invitation'] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "dateOfBirth-error")))
        self.driver.execute_script("document.getElementById('dateOfBirth').value = '1990-12-10'")
        self.click("form[data-form='invitation'] button[type=submit]")
        self.wait_for_path("/app")

        # Signed in and connected: the app knows the therapist, and the therapist's caseload the client.
        token = self.driver.execute_script("return localStorage.getItem('interlude.token')")
        self.assertTrue(token)
        therapist_token = call("POST", "/sessions", {"email": therapist, "password": PASSWORD})["token"]
        listed = call("GET", "/patients?q=ada", token=therapist_token)
        self.assertEqual([patient["name"] for patient in listed], ["Ada Lovelace"])
        self.assertEqual(listed[0]["status"], "active")

        # The link works once.
        self.driver.get(link)
        self.fill("password", PASSWORD)
        self.fill("repeatPassword", PASSWORD)
        self.driver.execute_script("document.getElementById('dateOfBirth').value = '1990-12-10'")
        self.click("#gender-female")
        self.click("#acceptPrivacy")
        self.click("form[data-form='invitation'] button[type=submit]")
        self.wait.until(EC.visibility_of_element_located((By.ID, "token-error")))
