"""`interlude serve --demo` on an empty data folder: the start-up screen lists the demo accounts, each signs in, the
demo therapist's caseload in the console shows weeks of history, compliance and an alert waiting; a second start
shows the same accounts and adds nobody and nothing that happened.

Started by scripts/test with INTERLUDE_BIN set; the server here has its own data folder and port.
"""
import html
import http.cookiejar
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

BIN = os.environ["INTERLUDE_BIN"]
# What a demo start writes: people, what they answered, alerts, what their therapist sent, sessions, records.
KEPT = ["users", "studies", "enrollments", "responses", "alerts", "appointments", "records", "samples"]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DemoStartTest(unittest.TestCase):
    def setUp(self):
        self.data = tempfile.mkdtemp(prefix="interlude-demo-")
        self.addCleanup(shutil.rmtree, self.data, ignore_errors=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"

    def start(self):
        """Starts `serve --demo` and answers what it printed once it is ready."""
        environment = {
            "PATH": os.environ.get("PATH", ""), "INTERLUDE_DATA_DIR": self.data, "PORT": str(self.port),
            "PUBLIC_URL": self.base, "LOG_LEVEL": "notice",
        }
        output = tempfile.TemporaryFile("w+", encoding="utf-8")
        self.addCleanup(output.close)
        process = subprocess.Popen([BIN, "serve", "--demo"], env=environment, stdout=output, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: process.poll() is None and process.kill())
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(f"{self.base}/ready", timeout=2) as response:
                    if response.status == 200:
                        output.seek(0)
                        return process, output.read()
            except OSError:
                time.sleep(0.5)
        output.seek(0)
        self.fail(f"the demo server did not start:\n{output.read()}")

    @staticmethod
    def stop(process):
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)

    def accounts(self, screen):
        """The demo accounts from their file: the screen, which goes to a log here, names the file, not the passwords."""
        path = os.path.join(self.data, "demo-accounts.txt")
        self.assertIn(path, screen)
        self.assertNotRegex(screen, r"Demo (therapist|researcher|patient)\s", "passwords printed where a log keeps them")
        with open(path, encoding="utf-8") as file:
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
            return [tuple(line.split("\t")) for line in file.read().splitlines()]

    def counts(self):
        with sqlite3.connect(os.path.join(self.data, "interlude.sqlite")) as database:
            return {table: database.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in KEPT}

    def api(self, method, path, body=None, token=None):
        request = urllib.request.Request(f"{self.base}/api/v1{path}", method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        data = json.dumps(body).encode() if body is not None else None
        with urllib.request.urlopen(request, data, timeout=30) as response:
            return json.loads(response.read().decode() or "null")

    def console(self, email, password):
        """A console session of `email`: the sign-in form with its token, then the caseload page."""
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with opener.open(f"{self.base}/console/login", timeout=30) as response:
            form = response.read().decode()
        token = html.unescape(re.search(r'name="_csrf" value="([^"]+)"', form).group(1))
        body = urllib.parse.urlencode({"_csrf": token, "next": "/console/patients", "email": email, "password": password})
        with opener.open(f"{self.base}/console/login", body.encode(), timeout=30) as response:
            self.assertTrue(response.geturl().endswith("/console/patients"), response.geturl())
            return response.read().decode()

    def test_a_living_demo_once(self):
        process, screen = self.start()
        accounts = self.accounts(screen)
        self.assertEqual([role for role, _, _ in accounts], ["therapist", "researcher", "patient", "patient", "patient"], screen)
        self.assertNotIn("[Migrator]", screen)

        for role, email, password in accounts:
            signed_in = self.api("POST", "/sessions", {"email": email, "password": password})
            self.assertEqual(signed_in["user"]["role"], role)
        with self.assertRaises(urllib.error.HTTPError) as refused:
            self.api("POST", "/sessions", {"email": accounts[0][1], "password": accounts[0][2] + "x"})
        self.assertEqual(refused.exception.code, 401)

        therapist = self.api("POST", "/sessions", {"email": accounts[0][1], "password": accounts[0][2]})["token"]
        caseload = self.api("GET", "/patients", token=therapist)
        self.assertEqual(len(caseload), 2)
        for patient in caseload:
            prompts = self.api("GET", f"/patients/{patient['id']}/prompts?limit=200", token=therapist)
            statuses = {prompt["status"] for prompt in prompts}
            self.assertTrue({"completed", "expired"} <= statuses, statuses)
        alerts = self.api("GET", "/alerts", token=therapist)
        self.assertTrue(any(alert["priority"] == "high" and not alert.get("acknowledgedAt") for alert in alerts), alerts)

        page = self.console(accounts[0][1], accounts[0][2])
        self.assertRegex(page, r'data-open-alerts="[1-9]')
        completed = [int(number) for number in re.findall(r'class="compliance">(\d+) / \d+ / \d+ · ', page)]
        self.assertEqual(len(completed), 2)
        self.assertTrue(all(number > 20 for number in completed), completed)
        self.stop(process)
        before = self.counts()
        self.assertGreater(before["responses"], 100)

        process, again = self.start()
        self.assertEqual(self.accounts(again), accounts)
        self.assertNotIn("Setting up the demonstration", again)
        self.stop(process)
        self.assertEqual(self.counts(), before)


if __name__ == "__main__":
    unittest.main()
