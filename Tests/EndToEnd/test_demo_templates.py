"""The demo templates end to end: `interlude demo` against the running server's database, then only HTTP.

Intersession (seed 000): the Daily opens once in each of 08:00-11:59, 12:00-15:59 and 16:00-19:59 Vienna time for
30 minutes, every day; the ISF-K opens 24 hours before each session and closes when it starts.
Track Your Stress (seed 001): the one-time questionnaire is open at once and comes first; daily prompts wait for
it; three a weekday and two a weekend day inside their windows; weekly on Sunday 18:00, monthly on the 1st.
TinnitusNavigator (seed 002): the patient's health record of events, therapies and audiograms, kept on the phone
(offline too, through /sync), read by their therapist and exported under a pseudonym for the study.
Anima (seed 003): a month of moods and samples; samples sent gzipped and from an Apple Health export uploaded in
two parts, only enabled types inside the window kept; a type switched off loses its samples; the export.
Intersession trial (seed 000's comparison): after a month, two clinics' admissions alternate between the app and
the control arm by cycles of four weeks, each clinic's own; only the app arm has the Daily; the export tells how.
iACT (seed 004): thoughts recorded again in other spellings count as the same thought, online and through /sync;
the therapist pages through them by a cursor and adds an example the phone pulls once; the client reduces their
reinforcement messages; the hexaflex and its pages are served.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set.
"""
import csv
import datetime
import gzip
import io
import json
import os
import re
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request
import uuid
import zipfile
from zoneinfo import ZoneInfo

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from interlude_e2e import API, BASE, answer_open_prompts, call, demo, export_zip, raw, send_bytes, sign_in  # noqa: E402  (the path is set just above)

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
        self.assertEqual(sorted(item["instrumentKey"] for item in adjustable), ["tys-daily", "tys-monthly", "tys-weekly"])

        patient_id = call("GET", "/me", token=patient)["id"]
        start = self.tomorrow()
        planned = call("GET", f"/patients/{patient_id}/schedule-preview?from={start}&days=35", token=researcher)
        weekly = [item["localOpensAt"] for item in planned if item["instrumentKey"] == "tys-weekly"]
        self.assertEqual(len(weekly), 5)
        for local in weekly:
            self.assertEqual(datetime.date.fromisoformat(local[:10]).weekday(), 6)
            self.assertTrue(local.endswith("T18:00"))
        monthly = [item["localOpensAt"] for item in planned if item["instrumentKey"] == "tys-monthly"]
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
        self.assertEqual(me["patient"]["records"], {
            "collects": ["event", "therapy", "audiogram"], "eventTypes": ["Hearing test"],
            "eventTypeNames": {"Hearing test": {"en": "Hearing test", "de": "Hörtest"}},
        })

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


    def test_anima(self):
        accounts = demo("anima")
        patient, researcher = (sign_in(accounts[role]) for role in ("patient", "researcher"))
        types = call("GET", "/me/sample-types", token=patient)
        self.assertEqual(len(types), 11)
        self.assertTrue(all(item["enabled"] and item["count"] > 0 and item["purposes"] for item in types), types)
        self.assertEqual(len(call("GET", "/me/moods", token=patient)), 31)
        chart = raw("GET", "/me/samples/daily.svg?type=stepCount", patient).decode()
        self.assertIn("<title", chart)

        # A mood now opens the window up to now; a gzipped batch is unpacked by the server.
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        stamp = lambda moment: moment.isoformat().replace("+00:00", "Z")
        call("POST", "/me/moods", {"id": str(uuid.uuid4()), "valence": 0.8, "recordedAt": stamp(now)}, token=patient)
        batch = {"samples": [{"type": "heartRate", "value": 70 + index % 10, "unit": "count/min", "sourceId": f"e2e-{index}",
                              "startsAt": stamp(now - datetime.timedelta(minutes=30 + index)),
                              "endsAt": stamp(now - datetime.timedelta(minutes=30 + index))} for index in range(300)]}
        batch["samples"].append(dict(batch["samples"][0], sourceId="e2e-bad", value=900))
        sent = send_bytes("POST", "/me/samples", gzip.compress(json.dumps(batch).encode()),
                          {"Content-Type": "application/json", "Content-Encoding": "gzip"}, patient)
        self.assertEqual((sent["stored"], [item["index"] for item in sent["rejected"]]), (300, [300]))

        # An Apple Health export in two parts, read by the server's job: walking speed kept, steps of a disabled
        # type and a record from before the window left out.
        call("PUT", "/me/sample-types/stepCount", {"enabled": False}, token=patient)
        health = lambda moment: moment.strftime("%Y-%m-%d %H:%M:%S +0000")
        records = "".join(
            f'<Record type="HKQuantityTypeIdentifier{kind}" sourceName="Phone" unit="{unit}" startDate="{health(start)}" '
            f'endDate="{health(start + datetime.timedelta(minutes=5))}" value="{value}"/>\n'
            for kind, unit, value, start in [("WalkingSpeed", "km/hr", 4.5, now - datetime.timedelta(hours=2)),
                                             ("StepCount", "count", 300, now - datetime.timedelta(hours=2)),
                                             ("WalkingSpeed", "km/hr", 4.0, now - datetime.timedelta(days=60))])
        xml = f'<?xml version="1.0"?>\n<HealthData locale="en">\n{records}</HealthData>\n'
        packed = io.BytesIO()
        with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("apple_health_export/export.xml", xml)
        data = packed.getvalue()
        started = send_bytes("POST", "/me/health-imports", data[:100], {"Content-Type": "application/zip", "Upload-Length": str(len(data))}, patient)
        self.assertEqual(started["status"], "receiving")
        progress = send_bytes("PATCH", f"/me/health-imports/{started['id']}", data[started["received"]:],
                              {"Content-Type": "application/octet-stream", "Upload-Offset": str(started["received"])}, patient)
        deadline = time.monotonic() + 60
        while progress["status"] not in ("done", "failed") and time.monotonic() < deadline:
            time.sleep(0.5)
            progress = call("GET", f"/me/health-imports/{started['id']}", token=patient)
        self.assertEqual(progress["status"], "done", progress)
        self.assertEqual((progress["stored"], progress["skipped"]["notEnabled"], progress["skipped"]["outsideWindow"]), (1, 1, 1), progress)

        # Switching a type off deletes its samples on the server at once.
        self.assertEqual(call("PUT", "/me/sample-types/walkingSpeed", {"enabled": False}, token=patient)["count"], 0)
        self.assertEqual(call("GET", "/me/samples?type=walkingSpeed", token=patient)["samples"], [])

        study = next(item["id"] for item in call("GET", "/studies", token=researcher) if item["title"] == "Anima")
        package = export_zip(researcher, study)
        tables = {name: list(csv.DictReader(io.StringIO(package.read(name).decode("utf-8-sig"))))
                  for name in ("samples.csv", "samples_daily.csv", "mood.csv")}
        self.assertEqual(len(tables["mood.csv"]), 32)
        self.assertNotIn("walkingSpeed", {row["type"] for row in tables["samples.csv"]})
        self.assertNotIn("stepCount", {row["type"] for row in tables["samples.csv"]})
        self.assertIn("heartRate", {row["type"] for row in tables["samples_daily.csv"]})
        self.assertNotIn("Demo Watch", package.read("samples.csv").decode())


    def test_iact(self):
        accounts = demo("iact")
        patient, therapist = (sign_in(accounts[role]) for role in ("patient", "therapist"))
        patient_id = call("GET", "/me", token=patient)["id"]
        thoughts = call("GET", "/me/thoughts", token=patient)
        self.assertEqual(len(thoughts), 7)
        good_enough = next(item for item in thoughts if item["text"] == "I am not good enough.")
        self.assertEqual(len(good_enough["occurrences"]), 7)

        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        again = call("POST", "/me/thoughts/occurrences", {
            "id": str(uuid.uuid4()), "text": "  i am NOT good   enough. ", "ratingBefore": -0.7, "ratingAfter": -0.2, "recordedAt": now,
        }, token=patient)
        self.assertEqual(again["thought"]["id"], good_enough["id"])
        offline = call("POST", "/sync", {"mutations": [
            {"id": str(uuid.uuid4()), "type": "record.create", "recordKind": "thoughtOccurrence", "recordId": str(uuid.uuid4()),
             "record": {"text": "Everyone else copes better than me.", "ratingBefore": -0.6, "ratingAfter": -0.3, "recordedAt": now}},
            {"id": str(uuid.uuid4()), "type": "record.delete", "recordKind": "thought", "recordId": good_enough["id"], "baseVersion": 1},
        ]}, token=patient)
        self.assertEqual([result["status"] for result in offline["results"]], ["applied", "applied"])

        seen, cursor = [], None
        while True:
            path = f"/patients/{patient_id}/thoughts?limit=3" + (f"&cursor={cursor}" if cursor else "")
            with urllib.request.urlopen(urllib.request.Request(API + path, headers={"Authorization": "Bearer " + therapist})) as response:
                seen += [item["text"] for item in json.loads(response.read())]
                cursor = response.headers.get("Next-Cursor")
            if not cursor:
                break
        self.assertEqual(len(seen), 7)
        self.assertEqual(len(set(seen)), 7, "no thought on two pages")
        self.assertIn("Everyone else copes better than me.", seen)
        self.assertNotIn("I am not good enough.", seen)

        before = call("GET", "/sync", token=patient)["cursor"]
        added = call("POST", f"/patients/{patient_id}/thoughts", {"text": "I must always be strong."}, token=therapist)
        pulled = call("GET", f"/sync?since={before}", token=patient)
        examples = [record for record in pulled["records"] if record["kind"] == "thought" and record["record"]["id"] == added["id"]]
        self.assertEqual(len(examples), 1)
        self.assertEqual(examples[0]["record"]["origin"], "therapist")

        [plan] = call("GET", "/me/message-plans", token=patient)
        self.assertTrue(plan["personChooses"])
        chosen = call("PUT", f"/me/message-plans/{plan['studyId']}", {"perDay": 1, "windowStart": "18:00", "windowEnd": "19:00"}, token=patient)
        self.assertEqual(chosen["choice"]["perDay"], 1)
        with self.assertRaises(urllib.error.HTTPError) as refused:
            call("PUT", f"/me/message-plans/{plan['studyId']}", {"perDay": 9, "windowStart": "18:00", "windowEnd": "19:00"}, token=patient)
        self.assertEqual(refused.exception.code, 422)

        hexaflex = urllib.request.urlopen(BASE + "/app/act").read().decode()
        self.assertEqual(len(re.findall(r'class="hexaflex-node"', hexaflex)), 6)
        self.assertIn("Values are what you want your life to be about",
                      urllib.request.urlopen(BASE + "/app/act/values").read().decode())


    def test_intersession_trial(self):
        accounts = demo("intersession-trial")
        self.assertEqual(set(accounts), {"researcher", "therapist", "patient"})
        researcher, therapist = sign_in(accounts["researcher"]), sign_in(accounts["therapist"])
        [trial] = call("GET", "/studies", token=researcher)
        self.assertEqual(trial["allocation"], "sequentialCycles")
        self.assertEqual(trial["arms"], ["app", "control"])
        self.assertEqual(trial["allocationSettings"]["targets"], [20, 20])
        self.assertEqual(trial["allocationSettings"]["control"], [False, True])
        # The allocation list waits for the study's end: while it runs it would tell the allocations to come.
        with self.assertRaises(urllib.error.HTTPError) as running:
            call("GET", f"/studies/{trial['id']}/allocations", token=researcher)
        self.assertEqual(running.exception.code, 409)
        # The therapist, on the study's team, sees the patients of their own clinic.
        self.assertEqual(len(call("GET", "/patients", token=therapist)), 5)

        package = export_zip(researcher, trial["id"])
        allocations = list(csv.DictReader(io.StringIO(package.read("allocations.csv").decode())))
        self.assertEqual(len(allocations), 10)
        by_site = {}
        for row in allocations:
            self.assertEqual(row["method"], "sequentialCycles")
            by_site.setdefault(row["site"], {}).setdefault(row["cycle"], set()).add(row["arm"])
        self.assertEqual(len(by_site), 2)
        for cycles in by_site.values():
            self.assertEqual(len(cycles), 2, cycles)
            self.assertEqual([len(arms) for arms in cycles.values()], [1, 1])
            self.assertEqual(set().union(*cycles.values()), {"app", "control"})
        arm_of = {row["pseudonym"]: row["arm"] for row in allocations}
        prompts = list(csv.DictReader(io.StringIO(package.read("prompts.csv").decode())))
        daily = {row["pseudonym"] for row in prompts if row["instrument_key"] == "intersession-daily"}
        weekly = {row["pseudonym"] for row in prompts if row["instrument_key"] == "phq-9"}
        self.assertEqual(daily, {pseudonym for pseudonym, arm in arm_of.items() if arm == "app"})
        self.assertTrue(weekly)
        self.assertTrue(weekly <= set(arm_of))


if __name__ == "__main__":
    unittest.main()
