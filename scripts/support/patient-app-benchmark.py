"""The patient app's home on a slow phone: headless Chromium reaching the server through a link like a phone's
(1.6 Mbit/s down and 750 kbit/s up, shared by all connections, 150 ms round trip), with the processor slowed four
times. The link is a small proxy here, so the service worker's own requests cross it too (the browser's network
emulation would leave them out). Measures, cold (no cache, no service worker) and warm (the next visit), the time
from the navigation's start until the home shows what is due, the bytes that reached the browser, and the home's
scripts as sent (compressed); the ceiling is GET /health navigated over the same link, in the same run: one round
trip with an almost empty answer.

Usage: patient-app-benchmark.py BASE_URL INTERLUDE_BIN   (CHROMIUM and CHROMEDRIVER name the browser and its driver).
Prints a line per visit for scripts/benchmark's table, its columns separated by tabs: what was measured, the
measurement, the ceiling, their ratio and the aim.
"""
import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE, BIN = sys.argv[1], sys.argv[2]


class Link:
    """A proxy in front of the server: every chunk arrives half a round trip after it was sent, and each direction
    carries its bytes one after another at its rate, whichever connection they belong to. Counts the bytes that
    reach the browser."""

    ROUND_TRIP = 0.150
    DOWN = 1_600_000 / 8
    UP = 750_000 / 8

    def __init__(self, server_port):
        self.server_port = server_port
        self.received = 0
        self.free = {"down": 0.0, "up": 0.0}
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        threading.Thread(target=self.run, args=(started,), daemon=True).start()
        started.wait()

    def run(self, started):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self.connect, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        started.set()
        self.loop.run_forever()

    async def connect(self, browser_reader, browser_writer):
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.server_port)
        await asyncio.gather(
            self.carry(browser_reader, server_writer, "up"), self.carry(server_reader, browser_writer, "down"),
            return_exceptions=True)

    async def carry(self, reader, writer, direction):
        rate = self.DOWN if direction == "down" else self.UP
        chunks = asyncio.Queue()

        async def read():
            while data := await reader.read(16384):
                await chunks.put((self.loop.time(), data))
            await chunks.put((self.loop.time(), b""))

        async def write():
            while True:
                sent, data = await chunks.get()
                if not data:
                    writer.close()
                    return
                start = max(self.loop.time(), self.free[direction])
                self.free[direction] = start + len(data) / rate
                await asyncio.sleep(max(0, max(self.free[direction], sent + self.ROUND_TRIP / 2) - self.loop.time()))
                writer.write(data)
                await writer.drain()
                if direction == "down":
                    self.received += len(data)

        await asyncio.gather(read(), write())

# Notes the moment the home first lists a due questionnaire, measured from the navigation's start.
DUE_SHOWN = """
new MutationObserver((changes, observer) => {
  if (document.querySelector("#due-list li")) {
    window.dueShownAt = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""

FORGET = """
const done = arguments[arguments.length - 1];
(async () => {
  for (const registration of await navigator.serviceWorker.getRegistrations()) await registration.unregister();
  for (const key of await caches.keys()) await caches.delete(key);
})().then(() => done(true), () => done(false));
"""


def call(method, path, body=None, token=None):
    request = urllib.request.Request(
        BASE + "/api/v1" + path, method=method, data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})})
    with urllib.request.urlopen(request) as answer:
        text = answer.read()
        return json.loads(text) if text else None


def demo_patient_with_a_due_questionnaire():
    """The demo's patient and therapist; the therapist sends the PHQ-9, open for three hours."""
    output = subprocess.run([BIN, "demo", "--template", "intersession"], check=True, capture_output=True, text=True).stdout
    accounts = dict((role, (email, password)) for role, email, password in
                    re.findall(r"^(therapist|patient): (\S+@\S+) (\S+)$", output, re.MULTILINE))
    therapist = call("POST", "/sessions", {"email": accounts["therapist"][0], "password": accounts["therapist"][1]})["token"]
    patient = next(entry["id"] for entry in call("GET", "/patients", token=therapist)
                   if entry.get("email") == accounts["patient"][0])
    now = time.time()
    stamp = lambda seconds: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
    call("POST", f"/patients/{patient}/prompts", {"instrumentKey": "phq-9", "opensAt": stamp(now), "closesAt": stamp(now + 10800)},
         token=therapist)
    return accounts["patient"]


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=390,844"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=os.environ.get("CHROMEDRIVER", "chromedriver")))
    driver.execute_cdp_cmd("Network.enable", {})
    return driver


def scripts_received(driver):
    """The bytes of scripts the page took from the network since the last call, as sent (compressed)."""
    urls, scripts = {}, 0
    for entry in driver.get_log("performance"):
        event = json.loads(entry["message"])["message"]
        parameters = event.get("params", {})
        if event["method"] == "Network.responseReceived":
            urls[parameters["requestId"]] = parameters["response"]["url"]
        elif event["method"] == "Network.loadingFinished" and urls.get(parameters["requestId"], "").endswith(".js"):
            scripts += parameters.get("encodedDataLength", 0)
    return scripts


def visit(driver, link, path, wait_for_due):
    driver.get_log("performance")
    link.received = 0
    driver.get(f"http://127.0.0.1:{link.port}{path}")
    if wait_for_due:
        WebDriverWait(driver, 60, poll_frequency=0.02).until(
            lambda d: d.execute_script("return window.dueShownAt !== undefined"))
        shown = driver.execute_script("return window.dueShownAt")
    else:
        shown = driver.execute_script("return performance.getEntriesByType('navigation')[0].responseEnd")
    until_shown = link.received
    # What follows the page: on the first visit, the service worker's copy of the app for the next.
    time.sleep(5)
    return {"ms": round(shown), "bytes": until_shown, "allBytes": link.received, "scriptBytes": scripts_received(driver)}


def main():
    email, password = demo_patient_with_a_due_questionnaire()
    link = Link(urllib.parse.urlsplit(BASE).port)
    driver = browser()
    try:
        driver.get(f"http://127.0.0.1:{link.port}/app/login")
        driver.find_element(By.ID, "email").send_keys(email)
        driver.find_element(By.ID, "password").send_keys(password)
        driver.find_element(By.CSS_SELECTOR, "form[data-form=login] button[type=submit]").click()
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#due-list li"))
        driver.execute_async_script(FORGET)
        driver.execute_cdp_cmd("Network.clearBrowserCache", {})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DUE_SHOWN})
        driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 4})
        floor = visit(driver, link, "/health", wait_for_due=False)
        cold = visit(driver, link, "/app", wait_for_due=True)
        # The service worker the cold visit installed keeps its files before the next visit, as on a phone.
        driver.execute_async_script(
            "const done = arguments[arguments.length - 1]; navigator.serviceWorker.ready.then(() => done(true));")
        time.sleep(3)
        warm = visit(driver, link, "/app", wait_for_due=True)
        ceiling = f"GET /health on the same link, {floor['ms'] / 1000:.2f} s"
        for name, visited, aim in (("cold", cold, "< 1.0 s, scripts < 60 KB"), ("warm", warm, "—")):
            print("\t".join((
                f"patient app: home {name}, 1.6 Mbit/s, 150 ms, 4× CPU",
                f"due shown after {visited['ms'] / 1000:.2f} s; {visited['bytes'] / 1024:.1f} KB received until then "
                f"({visited['allBytes'] / 1024:.1f} KB with what followed), scripts {visited['scriptBytes'] / 1024:.1f} KB",
                ceiling, f"{floor['ms'] / visited['ms']:.3f}", aim)))
    finally:
        driver.quit()


main()
