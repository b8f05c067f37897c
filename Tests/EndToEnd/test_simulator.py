"""interlude-sim, the example of InterludeKit in use, against the running server in real time: it registers its
participants (verification links from the mail outbox), joins a study, answers the questionnaire the study opens on
joining, and prints its own count, which the server's view of each participant matches.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set.
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from interlude_e2e import BASE, DATA, call, staff_token  # noqa: E402

PASSWORD = "simulated participant 1"


class SimulatorTest(unittest.TestCase):
    def simulator(self):
        return os.path.join(os.path.dirname(os.environ["INTERLUDE_BIN"]), "interlude-sim")

    def test_participants_join_answer_and_are_counted_alike(self):
        lead = staff_token("sim-lead-2@example.org", "researcher", "a long enough password")
        study = call("POST", "/studies", {
            "title": "Simulated study", "description": "Participants of interlude-sim.", "consentText": "I agree.",
            "consentVersion": "sim-1", "joinMode": "open", "status": "running",
        }, token=lead)["id"]
        call("POST", f"/studies/{study}/plans", {
            "instrumentKey": "who-5", "durationMinutes": 1440, "pattern": {"kind": "once"},
        }, token=lead)
        run = subprocess.run(
            [self.simulator(), "--server", BASE, "--participants", "3", "--minutes", "0.5", "--step", "2",
             "--answer-within", "0.1", "--answer-rate", "1", "--offline-rate", "0", "--seed", "11", "--study", study,
             "--consent-version", "sim-1", "--register-domain", "sim.example.org", "--mail-outbox",
             os.path.join(DATA, "outbox"), "--password", PASSWORD, "--distinct-addresses"],
            capture_output=True, text=True, timeout=300,
        )
        self.assertEqual(run.returncode, 0, run.stderr + run.stdout)
        rows = [line.split("\t") for line in run.stdout.splitlines() if "@sim.example.org\t" in line]
        self.assertEqual(len(rows), 3, run.stdout)
        for email, answered, missed, refused, *_ in rows:
            with self.subTest(email=email):
                self.assertEqual((answered, missed, refused), ("1", "0", "0"))
                token = call("POST", "/sessions", {"email": email, "password": PASSWORD}, client="198.51.100.61")["token"]
                completed = call("GET", "/me/prompts?status=completed", token=token)
                self.assertEqual([prompt["instrumentKey"] for prompt in completed], ["who-5"])
                self.assertEqual(call("GET", "/me/prompts", token=token), [])

    def test_a_wrong_configuration_is_refused_before_anything_is_sent(self):
        run = subprocess.run(
            [self.simulator(), "--server", BASE, "--register-domain", "sim.example.org"],
            capture_output=True, text=True, timeout=60,
        )
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("--mail-outbox", run.stderr)


if __name__ == "__main__":
    unittest.main()
