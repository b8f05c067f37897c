"""The demo templates end to end: `interlude demo` against the running server's database, then only HTTP.

Intersession (seed 000): the Daily opens once in each of 08:00-11:59, 12:00-15:59 and 16:00-19:59 Vienna time for
30 minutes, every day; the ISF-K opens 24 hours before each session and closes when it starts.
Track Your Stress (seed 001): the one-time questionnaire is open at once and comes first; daily prompts wait for
it; three a weekday and two a weekend day inside their windows; weekly on Sunday 18:00, monthly on the 1st.
TinnitusNavigator (seed 002): the patient's health record of events, therapies and audiograms, kept on the phone
(offline too, through /sync), read by their therapist and exported under a pseudonym for the study.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set.
"""
import csv
import datetime
import io
import os
import re
import subprocess
import sys
import unittest
import urllib.error
import uuid
from zoneinfo import ZoneInfo

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from interlude_e2e import answer_open_prompts, call, demo, export_zip, raw, sign_in  # noqa: E402  (the path is set just above)

VIENNA = ZoneInfo("Europe/Vienna")


def instant(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


class DemoTemplateTest(unittest.TestCase):
    def tomorrow(self):
        return (datetime.datetime.now(VIENNA) + datetime.timedelta(days=1)).date()

    def test_intersession(self):
        accounts = demo("intersession")
        self.assertEqual(set(accounts), {"therapist", "patient"})
        therapist, patient = sign_in(accounts["therapist"]), sign_in(accounts["patient"])
        self.assertEqual(call("GET", "/me", token=patient)["timeZone"], "Europe/Vienna")
        patient_id = call("GET", "/me", token=patient)["id"]
        self.assertIn(patient_id, [row["id"] for row in call("GET", "/patients", token=therapist)])

        start = self.tomorrow()
        planned = call("GET", f"/patients/{patient_id}/schedule-preview?from={start}&days=13", token=therapist)
        daily = [item for item in planned if item["instrumentKey"] == "intersession-daily"]
        by_day = {}
        for item in daily:
            by_day.setdefault(item["localOpensAt"][:10], []).append(item["localOpensAt"][11:])
        self.assertEqual(len(by_day), 13)
        for day, times in by_day.items():
            times.sort()
            self.assertEqual(len(times), 3, day)
            self.assertTrue("08:00" <= times[0] <= "11:59" and "12:00" <= times[1] <= "15:59", times)
            self.assertTrue("16:00" <= times[2] <= "19:59", times)
        for item in daily:
            self.assertEqual(instant(item["closesAt"]) - instant(item["opensAt"]), datetime.timedelta(minutes=30))

        practice = call("GET", "/me/therapist", token=patient)
        self.assertEqual(practice["emergencyNumber"], "+43 1 000 00 99")
        sessions = call("GET", "/me/appointments", token=patient)
        before = [item for item in planned if item["instrumentKey"] == "isf-k"]
        self.assertEqual(len(sessions), 2)
        self.assertEqual(len(before), 2)
        for session, prompt in zip(sessions, before):
            self.assertEqual(instant(prompt["opensAt"]), instant(session["startsAt"]) - datetime.timedelta(hours=24))
            self.assertEqual(instant(prompt["closesAt"]), instant(session["startsAt"]))

    def test_track_your_stress(self):
        accounts = demo("track-your-stress")
        self.assertEqual(set(accounts), {"therapist", "patient", "researcher"})
        patient, researcher = sign_in(accounts["patient"]), sign_in(accounts["researcher"])
        open_now = call("GET", "/me/prompts", token=patient)
        self.assertEqual(open_now[0]["instrumentKey"], "tys-baseline")
        self.assertFalse(open_now[0].get("blocked", False))
        self.assertTrue(all(item.get("blocked") for item in open_now[1:]))
        adjustable = call("GET", "/me/plan-adjustments", token=patient)
        self.assertEqual([item["instrumentKey"] for item in adjustable], ["tys-daily"])

        patient_id = call("GET", "/me", token=patient)["id"]
        start = self.tomorrow()
        planned = call("GET", f"/patients/{patient_id}/schedule-preview?from={start}&days=35", token=researcher)
        weekly = [item["localOpensAt"] for item in planned if item["instrumentKey"] == "tys-weekly"]
        self.assertEqual(len(weekly), 5)
        for local in weekly:
            self.assertEqual(datetime.date.fromisoformat(local[:10]).weekday(), 6)
            self.assertTrue(local.endswith("T18:00"))
        monthly = [item["localOpensAt"] for item in planned if item["instrumentKey"] == "pss-10"]
        self.assertTrue(monthly)
        self.assertTrue(all(local.endswith("-01T18:00") for local in monthly))
        per_day = {}
        for item in planned:
            if item["instrumentKey"] == "tys-daily":
                per_day.setdefault(item["localOpensAt"][:10], []).append(item["localOpensAt"][11:])
        for day, times in per_day.items():
            weekend = datetime.date.fromisoformat(day).weekday() >= 5
            self.assertEqual(len(times), 2 if weekend else 3, day)
            window = ("10:00", "21:00") if weekend else ("08:00", "20:00")
            self.assertTrue(all(window[0] <= time <= window[1] for time in times), (day, times))

    def test_tinnitus_navigator(self):
        accounts = demo("tinnitus-navigator")
        self.assertEqual(set(accounts), {"therapist", "patient", "researcher"})
        patient, therapist, researcher = (sign_in(accounts[role]) for role in ("patient", "therapist", "researcher"))
        me = call("GET", "/me", token=patient)
        self.assertEqual(me["patient"]["records"], {"collects": ["event", "therapy", "audiogram"], "eventTypes": ["Hearing test"]})

        # The history the template wrote: newest event first, searchable and filtered by the study's own type.
        events = call("GET", "/me/events", token=patient)
        self.assertEqual(len(events), 5)
        self.assertEqual([event["occurredAt"] for event in events], sorted((event["occurredAt"] for event in events), reverse=True))
        self.assertEqual(len(call("GET", "/me/events?q=attack", token=patient)), 2)
        self.assertEqual([event["title"] for event in call("GET", "/me/events?type=Hearing%20test", token=patient)],
                         ["Follow-up hearing test"])
        therapies = call("GET", "/me/therapies", token=patient)
        self.assertEqual([(therapy["type"], therapy["ongoing"]) for therapy in therapies],
                         [("retrainingTherapy", True), ("medicalTreatment", False)])
        audiograms = call("GET", "/me/audiograms", token=patient)
        dips = [next(point["thresholdDbHL"] for point in audiogram["points"]
                     if point["ear"] == "right" and point["frequencyHz"] == 4000) for audiogram in reversed(audiograms)]
        self.assertEqual(dips, [35, 45, 55])
        self.assertLess(audiograms[-1]["rightAverage"], audiograms[0]["rightAverage"])
        latest, first = audiograms[0]["id"], audiograms[-1]["id"]
        chart = raw("GET", f"/me/audiograms/{latest}/chart.svg?compare={first}", patient).decode()
        self.assertTrue(chart.startswith("<svg") or chart.startswith("<?xml"), chart[:80])
        self.assertIn("compared with", chart)

        # The case history is open at once and answered; a tinnitus attack recorded offline arrives through /sync.
        self.assertIn("tschq", [prompt["instrumentKey"] for prompt in call("GET", "/me/prompts", token=patient)])
        self.assertGreaterEqual(answer_open_prompts(patient), 1)
        offline = str(uuid.uuid4())
        synced = call("POST", "/sync", {"mutations": [{
            "id": str(uuid.uuid4()), "type": "record.create", "recordKind": "event", "recordId": offline,
            "record": {"id": offline, "title": "Attack on the train", "occurredAt": events[0]["occurredAt"], "type": "tinnitusAttack"},
        }]}, token=patient)
        self.assertEqual(synced["results"][0]["status"], "applied")

        # The therapist reads the record (audited for the patient); the researcher only through the export.
        patient_id = me["id"]
        self.assertEqual(len(call("GET", f"/patients/{patient_id}/events", token=therapist)), 6)
        self.assertEqual(len(call("GET", f"/patients/{patient_id}/therapies", token=therapist)), 2)
        fhir = call("GET", f"/audiograms/{latest}?format=fhir", token=therapist)
        self.assertEqual(fhir["code"]["coding"][0]["code"], "89015-2")
        log = call("GET", "/me/access-log", token=patient)["entries"]
        self.assertTrue(any(entry["action"].startswith("records.") for entry in log), [entry["action"] for entry in log])
        with self.assertRaises(urllib.error.HTTPError) as refused:
            call("GET", f"/patients/{patient_id}/events", token=researcher)
        self.assertIn(refused.exception.code, (403, 404))

        study = next(item["id"] for item in call("GET", "/studies", token=researcher) if item["title"] == "TinnitusNavigator")
        package = export_zip(researcher, study)
        tables = {name: list(csv.DictReader(io.StringIO(package.read(name).decode("utf-8-sig"))))
                  for name in ("events.csv", "therapies.csv", "audiograms.csv")}
        self.assertEqual(len(tables["events.csv"]), 6)
        self.assertEqual(len(tables["therapies.csv"]), 2)
        self.assertEqual(len(tables["audiograms.csv"]), 3 * 14)
        pseudonyms = {row["pseudonym"] for rows in tables.values() for row in rows}
        self.assertEqual(len(pseudonyms), 1)
        self.assertTrue(pseudonyms.pop().startswith("P-"))
        everything = b"".join(package.read(name) for name in package.namelist())
        self.assertNotIn(accounts["patient"][0].encode(), everything)


if __name__ == "__main__":
    unittest.main()
