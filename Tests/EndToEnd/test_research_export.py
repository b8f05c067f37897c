"""A research export end to end, with the Python example of examples/python: `interlude demo` fills a study, the
demo patient answers what is open, the demo researcher makes a personal access token, and the example downloads an
export with it and computes response rates and weekly mean scores, which must agree with the server's own
compliance figures and scores in an export of the same study.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set; pandas is in the venv.
"""
import csv
import io
import os
import subprocess
import sys
import tempfile
import unittest
import urllib.error

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from interlude_e2e import answer_open_prompts, call, demo, export_zip, raw, sign_in  # noqa: E402

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "weekly_summary.py")


def rows(package, name):
    return list(csv.DictReader(io.TextIOWrapper(package.open(name), encoding="utf-8", newline="")))


class ResearchExportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        accounts = demo("track-your-stress")
        cls.answered = answer_open_prompts(sign_in(accounts["patient"]))
        researcher = sign_in(accounts["researcher"])
        cls.study = next(s["id"] for s in call("GET", "/studies", token=researcher) if s["joinMode"] != "pairingCode")
        cls.token = call("POST", "/me/tokens", {"name": "analysis", "studyIds": [cls.study], "expiresInDays": 1},
                         token=researcher)["token"]

    def test_the_python_example_agrees_with_the_servers_compliance(self):
        self.assertGreater(self.answered, 0)
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, EXAMPLE, "--url", os.environ["INTERLUDE_URL"], "--token", self.token,
                            "--study", self.study, "--out", out], check=True, capture_output=True, text=True)
            with open(os.path.join(out, "response_rates.csv"), newline="") as handle:
                rates = {row["pseudonym"]: row for row in csv.DictReader(handle)}
            with open(os.path.join(out, "weekly_scores.csv"), newline="") as handle:
                weekly = list(csv.DictReader(handle))
        package = export_zip(self.token, self.study)
        participants = rows(package, "participants.csv")
        self.assertEqual(len(participants), 1)
        server = participants[0]
        mine = rates[server["pseudonym"]]
        self.assertEqual(int(mine["answered"]), self.answered)
        self.assertEqual(int(mine["answered"]), int(server["answered"]))
        self.assertEqual(int(mine["expired"]), int(server["expired"]))
        self.assertAlmostEqual(float(mine["response_rate"]), float(server["rate"]))
        valued = [row for row in rows(package, "scores.csv") if row["value"]]
        self.assertEqual(sum(int(row["n"]) for row in weekly), len(valued))
        for row in weekly:
            same = [float(s["value"]) for s in valued if (s["instrument_key"], s["score"]) == (row["instrument_key"], row["score"])]
            self.assertAlmostEqual(float(row["mean"]), sum(same) / len(same))

    def test_a_token_opens_the_export_endpoints_only(self):
        with self.assertRaises(urllib.error.HTTPError) as refused:
            raw("GET", "/me", self.token)
        self.assertEqual(refused.exception.code, 401)


if __name__ == "__main__":
    unittest.main()
