"""Every page of the patient app and the console, as the people who use them reach them: signed out, as patients of
three templates, as a therapist, a researcher and an admin. Pages are found by following the links each person
sees; a page that differs only by an id is one page.

Each page is audited with axe-core (as shipped by axe-selenium-python) in English and German, at a phone's and a
desktop's width, and must show no serious or critical violation. In English at desktop width every element that
takes the keyboard is reached with Tab alone and shows a visible focus ring; at 200 % zoom (half the width, twice
the text) the page needs no sideways scrolling and no text is cut off. Each page of the patient app, on a 360 px phone,
scrolls only downwards, and every target a finger taps measures at least 44 × 44 CSS px.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR, INTERLUDE_BIN and CHROMIUM set.
"""
import os
import re
import subprocess
import uuid
from urllib.parse import urljoin, urlparse

from axe_selenium_python import Axe
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from browser_support import BrowserTestCase
from interlude_e2e import BASE, call
from test_appointments import demo

PHONE, DESKTOP, SMALL_PHONE = (390, 844), (1280, 900), (360, 740)
ID = re.compile(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
# Links that leave the page for a file or end the session.
NOT_A_PAGE = re.compile(r"(/logout|/download|/fhir|/calendar|\.(zip|csv|ics|json|pdf)$)")

# The axe-core axe-selenium-python ships predates two autofill tokens the HTML standard defines and browsers and
# password managers use: "one-time-code", and "username" on an email field. Only these two findings are set aside.
OUTDATED = [
    ("autocomplete-valid", re.compile(r'autocomplete="one-time-code"')),
    ("autocomplete-valid", re.compile(r'type="email"[^>]*autocomplete="username"|autocomplete="username"[^>]*type="email"')),
]

FOCUSABLE = """
const all = Array.from(document.querySelectorAll(
  'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]'));
const shown = (el) => {
  if (el.closest('[hidden], [inert]') || el.disabled || el.tabIndex < 0) return false;
  const details = el.closest('details:not([open])');
  if (details && el.tagName !== 'SUMMARY') return false;
  if (el.tagName === 'SUMMARY' && el.parentElement.closest('details:not([open])')) return false;
  const style = getComputedStyle(el);
  if (style.visibility === 'hidden' || style.display === 'none') return false;
  return el.getClientRects().length > 0 || el.classList.contains('skip-link');
};
const radios = new Set();
return all.filter(shown).filter((el) => {
  if (el.type !== 'radio') return true;
  const group = `${el.form ? Array.from(document.forms).indexOf(el.form) : -1}/${el.name}`;
  if (radios.has(group)) return false;
  radios.add(group);
  return true;
}).map((el, index) => { el.dataset.a11y = String(index); return el.dataset.a11y; }).length;
"""

FOCUS_RING = """
const el = document.activeElement;
if (!el || el === document.body) return null;
// Focus in a frame is on the frame's own page, whose rings are its own.
if (el.tagName === 'IFRAME') return [el.dataset.a11y || null, true, ''];
const style = getComputedStyle(el);
const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
const shadow = style.boxShadow && style.boxShadow !== 'none';
return [el.dataset.a11y || null, outline || shadow, el.outerHTML.slice(0, 120)];
"""

CLIPPED = """
const cut = [];
for (const el of document.querySelectorAll('body *')) {
  if (el.closest('.visually-hidden, [hidden], details:not([open]) > :not(summary)')) continue;
  const style = getComputedStyle(el);
  if (!['hidden', 'clip'].includes(style.overflowX) || !el.textContent.trim()) continue;
  if (el.scrollWidth > el.clientWidth + 2) cut.push(el.outerHTML.slice(0, 120));
}
const page = document.documentElement.scrollWidth > window.innerWidth + 1;
return {page, pageWidth: document.documentElement.scrollWidth, cut};
"""


SMALL_TARGETS = """
// What a finger taps, measured as laid out: a link, button, field or toggle smaller than 44 x 44 CSS px. A box or
// dot to tick counts with its label; a link inside a sentence is exempt, as WCAG's target-size rule exempts it.
const small = [];
const targets = document.querySelectorAll(
  'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button]');
for (const el of targets) {
  if (el.closest('[hidden], [inert], .visually-hidden, details:not([open]) > :not(summary)')) continue;
  if (el.classList.contains('skip-link')) continue;
  const style = getComputedStyle(el);
  if (style.display === 'none' || style.visibility === 'hidden') continue;
  let box = el.getBoundingClientRect();
  if (box.width === 0 && box.height === 0) continue;
  if (el.matches('input[type=checkbox], input[type=radio]')) {
    const label = el.closest('label') || (el.id && document.querySelector(`label[for="${el.id}"]`));
    if (label) box = label.getBoundingClientRect();
  }
  const parent = el.parentElement;
  const inSentence = el.tagName === 'A' && style.display === 'inline' && parent &&
    parent.textContent.trim().length > el.textContent.trim().length;
  if (inSentence) continue;
  if (box.width < 43.5 || box.height < 43.5) {
    small.push(`${Math.round(box.width)}x${Math.round(box.height)} ${el.outerHTML.slice(0, 100)}`);
  }
}
return small;
"""


class AccessibilityTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        self.audited = set()
        self.problems = []

    # finding pages

    def pattern(self, path):
        path = re.sub(r"/\d+(?=/|$)", "/:n", ID.sub(":id", path))
        # Every instrument's page is the same page.
        return re.sub(r"^/console/instruments/[^/:]+/:n", "/console/instruments/:key/:n", path)

    def crawl(self, start, prefixes, code):
        """Audits `start` and every page its links lead to under `prefixes`, each pattern once per language; in
        English with the keyboard and zoom checks too."""
        queue = [start]
        while queue:
            path = queue.pop(0)
            # The start page is each person's own (a dashboard differs by role), so it is always looked at.
            if (code, self.pattern(path)) in self.audited and path != start:
                continue
            self.audited.add((code, self.pattern(path)))
            links = self.audit(path, code)
            self.audited.add((code, self.pattern(urlparse(self.driver.current_url).path)))
            for link in links:
                parsed = urlparse(link)
                if parsed.netloc == urlparse(BASE).netloc and parsed.path.startswith(prefixes) \
                        and not NOT_A_PAGE.search(parsed.path) and (code, self.pattern(parsed.path)) not in self.audited:
                    queue.append(parsed.path)

    # one page

    def audit(self, path, code):
        """All checks of one page; answers the links it shows."""
        self.driver.set_window_size(*PHONE)
        self.open(path)
        name = self.pattern(urlparse(self.driver.current_url).path)
        lang = self.driver.execute_script("return document.documentElement.lang")
        if not lang.startswith(code):
            self.problems.append(f"{name}: in {code}, the page says lang={lang!r}")
        if name.startswith("/app") or name == "/":
            self.small_phone(name, code)
        for size in (PHONE, DESKTOP):
            self.driver.set_window_size(*size)
            self.axe(f"{name} [{code}, {size[0]}px]")
        links = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
        if code == "en":
            self.keyboard(name)
            self.zoom(name)
        return [urljoin(BASE + path, link) for link in links]

    def axe(self, label):
        axe = Axe(self.driver)
        axe.inject()
        for violation in axe.run()["violations"]:
            if violation["impact"] not in ("serious", "critical"):
                continue
            nodes = [node for node in violation["nodes"]
                     if not any(rule == violation["id"] and shape.search(node["html"]) for rule, shape in OUTDATED)]
            for node in nodes[:3]:
                self.problems.append(f"{label}: {violation['id']} ({violation['impact']}) at {node['html'][:120]}")

    def small_phone(self, name, code):
        """On a 360 px phone the patient app's page scrolls only downwards, and every target is a finger's size."""
        self.driver.set_window_size(*SMALL_PHONE)
        width = self.driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        if width > 1:
            self.problems.append(f"{name} [{code}]: at 360 px the page scrolls sideways by {width}px")
        for target in self.driver.execute_script(SMALL_TARGETS)[:3]:
            self.problems.append(f"{name} [{code}]: a target under 44 x 44 px: {target}")
        self.driver.set_window_size(*PHONE)

    def keyboard(self, name):
        self.driver.set_window_size(*DESKTOP)
        count = self.driver.execute_script(FOCUSABLE)
        self.driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
        reached, unringed = set(), []
        # Date and time fields take several presses, a frame as many as its page has: Tab until focus comes round.
        for _ in range(count * 6 + 60):
            ActionChains(self.driver).send_keys(Keys.TAB).perform()
            state = self.driver.execute_script(FOCUS_RING)
            if state is None:
                continue
            index, ringed, html = state
            if index is not None and index in reached and len(reached) == count:
                break
            if index is not None:
                reached.add(index)
            if not ringed:
                unringed.append(html)
        missed = count - len(reached)
        if missed > 0:
            self.problems.append(f"{name}: {missed} of {count} keyboard targets not reached with Tab")
        for html in unringed[:3]:
            self.problems.append(f"{name}: no visible focus on {html}")

    def zoom(self, name):
        self.driver.set_window_size(DESKTOP[0] // 2, DESKTOP[1])
        self.driver.execute_script("document.documentElement.style.fontSize = '200%'")
        found = self.driver.execute_script(CLIPPED)
        if found["page"]:
            self.problems.append(f"{name}: at 200 % the page scrolls sideways ({found['pageWidth']}px)")
        for html in found["cut"][:3]:
            self.problems.append(f"{name}: at 200 % text is cut off in {html}")

    # people

    def app_person(self, address, password):
        self.driver.delete_all_cookies()
        self.open("/app/login")
        self.app_sign_in(address, password)

    def app_pages(self, start, prefixes):
        """The app's language follows the person's choice in the browser, kept in a cookie."""
        for code in ("de", "en"):
            self.driver.add_cookie({"name": "lang", "value": code, "path": "/"})
            self.crawl(start, prefixes, code)

    def console_pages(self, address, password):
        """The console speaks each staff member's own language, set on their account."""
        token = call("POST", "/sessions", {"email": address, "password": password}, client="198.51.100.61")["token"]
        self.driver.delete_all_cookies()
        self.console_sign_in(address, password)
        self.wait.until(lambda driver: "/console/login" not in driver.current_url)
        for code in ("de", "en"):
            call("PATCH", "/me", {"locale": code}, token=token, client="198.51.100.61")
            self.crawl("/console", ("/console",), code)

    def admin(self):
        address, password = f"a11y-{uuid.uuid4().hex[:8]}@example.org", "accessible admin passphrase"
        subprocess.run(
            [os.environ["INTERLUDE_BIN"], "user", "create", "--email", address, "--role", "admin", "--password", password],
            check=True, capture_output=True)
        return address, password

    def test_every_page_for_everyone(self):
        self.open("/")
        self.app_pages("/", ("/app/login", "/app/register", "/app/forgot-password", "/app/privacy", "/app/imprint", "/console"))
        intersession = demo("intersession")
        for patient in [demo(template)["patient"] for template in ("iact", "tinnitus-navigator", "anima", "track-your-stress")] + [intersession["patient"]]:
            self.app_person(*patient)
            self.app_pages("/app", ("/app",))
        self.console_pages(*intersession["therapist"])
        self.console_pages(*demo("anima")["researcher"])
        self.console_pages(*self.admin())

        pages = {pattern for _, pattern in self.audited}
        self.assertGreater(len(pages), 60, sorted(pages))
        self.assertEqual(self.problems, [], "\n".join(self.problems))
