"""FHIR exports checked by an independent validator: fhir.resources 6.4 (FHIR R4 4.0.1) parses every library
instrument's Questionnaire and the QuestionnaireResponse of real submissions, and rejects a broken one.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set.
"""
import json
import os
import sys
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

import fhir.resources
from fhir.resources.consent import Consent
from fhir.resources.observation import Observation
from fhir.resources.procedure import Procedure
from fhir.resources.questionnaire import Questionnaire
from fhir.resources.questionnaireresponse import QuestionnaireResponse
from interlude_e2e import (answer_open_prompts, call, demo, export_zip, iso, own_copy_zip, pair, patient_token, sign_in,
                           staff_token)
from pydantic import ValidationError

LIBRARY = ["phq-9", "gad-7", "who-5", "pss-10", "intersession-daily", "isf-k", "tys-baseline", "tys-daily", "tys-weekly", "tys-monthly", "mood-vas",
           "tschq", "worst-symptom", "mini-tq"]


def library_version(key):
    """The version of an instrument the library ships (its file in Resources/Instruments)."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "Resources", "Instruments", f"{key}.json")
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["version"]


class FHIRExportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        assert fhir.resources.__fhir_version__ == "4.0.1", fhir.resources.__fhir_version__
        cls.therapist = staff_token("fhir-therapist@example.org", "therapist", "fhir passphrase 1")
        cls.patient = patient_token("fhir-patient@example.org", "fhir passphrase 2", locale="de")
        cls.patient_id = pair(cls.patient, cls.therapist)

    def submit(self, key, answers):
        prompt = call("POST", f"/patients/{self.patient_id}/prompts",
                      {"instrumentKey": key, "opensAt": iso(-1), "closesAt": iso(60)}, token=self.therapist)
        result = call("POST", "/me/responses", {
            "id": str(uuid.uuid4()), "promptId": prompt["id"], "instrumentKey": key, "version": prompt["instrumentVersion"],
            "answers": answers, "startedAt": iso(-1), "completedAt": iso(),
        }, token=self.patient)
        return call("GET", f"/responses/{result['id']}?format=fhir", token=self.therapist)

    def test_every_library_questionnaire_is_valid_fhir_r4(self):
        for key in LIBRARY:
            with self.subTest(key=key):
                exported = call("GET", f"/instruments/{key}/versions/{library_version(key)}?format=fhir", token=self.therapist)
                questionnaire = Questionnaire.parse_obj(exported)
                self.assertEqual(questionnaire.status, "active")
                self.assertTrue(questionnaire.item)

    def test_responses_are_valid_fhir_r4(self):
        cases = {
            "phq-9": {f"phq9_{i}": "1" for i in range(1, 10)} | {"phq9_difficulty": "2"},
            "intersession-daily": {"thought": True, "feeling": "4"},
            "tys-daily": {"stress": 70, "control": 40, "negative": 60, "positive": 20, "stressors": ["work", "private"],
                          "valence": 3, "arousal": 7, "importance": 80, "abilities": 50},
            "mood-vas": {"mood": 35, "note": "Müde, aber zuversichtlich"},
            "worst-symptom": {"worst": "other", "worstOther": "Druck im Ohr", "burden": 6},
        }
        for key, answers in cases.items():
            with self.subTest(key=key):
                exported = self.submit(key, answers)
                response = QuestionnaireResponse.parse_obj(exported)
                self.assertEqual(response.status, "completed")
                self.assertTrue(response.questionnaire.endswith(f"/fhir/Questionnaire/{key}|{library_version(key)}"))
                linked = [item.linkId for group in response.item for item in group.item]
                self.assertTrue(set(answers) <= set(linked), linked)

    def test_a_research_export_holds_valid_fhir_r4_ndjson(self):
        accounts = demo("track-your-stress")
        answered = answer_open_prompts(sign_in(accounts["patient"]))
        researcher = sign_in(accounts["researcher"])
        study = next(s["id"] for s in call("GET", "/studies", token=researcher) if s["joinMode"] != "pairingCode")
        package = export_zip(researcher, study)
        questionnaires = package.read("fhir/Questionnaire.ndjson").decode().splitlines()
        responses = package.read("fhir/QuestionnaireResponse.ndjson").decode().splitlines()
        self.assertTrue(questionnaires)
        self.assertEqual(len(responses), answered)
        for line in questionnaires:
            self.assertEqual(Questionnaire.parse_raw(line).status, "active")
        for line in responses:
            response = QuestionnaireResponse.parse_raw(line)
            self.assertEqual(response.status, "completed")
            self.assertTrue(response.subject.identifier.value.startswith("P-"))
        consents = package.read("fhir/Consent.ndjson").decode().splitlines()
        self.assertTrue(consents)
        for line in consents:
            consent = Consent.parse_raw(line)
            self.assertEqual(consent.status, "active")
            self.assertEqual(consent.scope.coding[0].code, "research")
            self.assertEqual(consent.provision.type, "permit")
            self.assertTrue(consent.patient.identifier.value.startswith("P-"))

    def test_samples_and_moods_are_valid_fhir_r4(self):
        accounts = demo("anima")
        researcher = sign_in(accounts["researcher"])
        study = next(s["id"] for s in call("GET", "/studies", token=researcher) if s["title"] == "Anima")
        lines = export_zip(researcher, study).read("fhir/Observation.ndjson").decode().splitlines()
        observations = [Observation.parse_raw(line) for line in lines]
        self.assertGreater(len(observations), 1000)
        codings = [{(coding.system, coding.code) for coding in o.code.coding} for o in observations]
        heart = [o for o, codes in zip(observations, codings) if ("http://loinc.org", "8867-4") in codes]
        self.assertTrue(heart)
        self.assertTrue(all(("http://developer.apple.com/documentation/healthkit", "HKQuantityTypeIdentifierHeartRate") in
                            {(c.system, c.code) for c in o.code.coding} for o in heart))
        self.assertTrue(all(o.valueQuantity.system == "http://unitsofmeasure.org" and o.valueQuantity.code == "/min" for o in heart))
        speeds = [o for o in observations if o.code.text == "walkingSpeed"]
        self.assertTrue(speeds and all(len(o.code.coding) == 1 and o.effectivePeriod.start < o.effectivePeriod.end for o in speeds))
        moods = [o for o in observations if o.code.text == "Self-reported mood (valence)"]
        self.assertEqual(len(moods), 31)
        self.assertTrue(all(0 <= o.valueQuantity.value <= 1 and o.subject.identifier.value.startswith("P-") for o in moods))
        broken = json.loads(lines[0])
        broken["valueQuantity"]["value"] = "fast"
        with self.assertRaises(ValidationError):
            Observation.parse_obj(broken)

    def test_health_records_are_valid_fhir_r4(self):
        patient = patient_token("fhir-records@example.org", "fhir passphrase 3")
        pair(patient, self.therapist)
        points = [{"ear": ear, "frequencyHz": frequency, "thresholdDbHL": level}
                  for ear in ("right", "left") for frequency, level in ((250, 15), (500, 20), (1000, 30), (2000, 40), (4000, 55))]
        points += [{"ear": "left", "frequencyHz": 8000, "thresholdDbHL": None},
                   {"ear": "right", "frequencyHz": 1000, "thresholdDbHL": 25, "conduction": "bone", "masked": True}]
        audiogram = call("POST", "/me/audiograms", {"id": str(uuid.uuid4()), "measuredAt": iso(-60), "points": points}, token=patient)
        call("POST", "/me/events", {"id": str(uuid.uuid4()), "title": "Loud concert", "occurredAt": iso(-120),
                                    "type": "tinnitusAttack", "description": "Ringing for two days"}, token=patient)
        call("POST", "/me/therapies", {"id": str(uuid.uuid4()), "name": "Hearing aid", "type": "hearingAid",
                                       "startDate": "2026-01-10"}, token=patient)
        call("POST", "/me/therapies", {"id": str(uuid.uuid4()), "name": "Physiotherapy", "type": "physicalTherapy",
                                       "startDate": "2025-09-01", "endDate": "2025-10-15", "note": "Neck"}, token=patient)

        exported = Observation.parse_obj(call("GET", f"/audiograms/{audiogram['id']}?format=fhir", token=self.therapist))
        self.assertEqual(exported.code.coding[0].code, "89015-2")
        self.assertEqual(len(exported.component), len(points))
        codes = {component.code.coding[0].code for component in exported.component if component.code.coding}
        self.assertTrue({"89017-8", "89016-0", "89025-1", "89024-4"} <= codes, codes)
        absent = [component for component in exported.component if component.dataAbsentReason]
        self.assertEqual(len(absent), 1)

        package = own_copy_zip(patient)
        observations = [Observation.parse_raw(line) for line in package.read("fhir/Observation.ndjson").decode().splitlines()]
        self.assertEqual(sorted(o.code.text for o in observations), ["Audiogram", "Loud concert"])
        procedures = [Procedure.parse_raw(line) for line in package.read("fhir/Procedure.ndjson").decode().splitlines()]
        self.assertEqual(sorted(p.status for p in procedures), ["completed", "in-progress"])
        self.assertTrue(all(p.subject.identifier.value.startswith("P-") for p in procedures))

        broken = json.loads(exported.json())
        broken["component"][0]["valueQuantity"]["value"] = "loud"
        with self.assertRaises(ValidationError):
            Observation.parse_obj(broken)

    def test_thoughts_are_valid_fhir_r4(self):
        patient = sign_in(demo("iact")["patient"])
        lines = own_copy_zip(patient).read("fhir/Observation.ndjson").decode().splitlines()
        observations = [Observation.parse_raw(line) for line in lines]
        thoughts = {o.id: o for o in observations if o.code.text == "Difficult thought"}
        occurrences = [o for o in observations if o.code.text == "Difficult thought, rated"]
        self.assertEqual(len(thoughts), 7)
        self.assertEqual(len(occurrences), 22)
        self.assertTrue(all(o.valueString for o in thoughts.values()))
        for occurrence in occurrences:
            before, after = (component.valueQuantity.value for component in occurrence.component)
            self.assertTrue(-1 <= before < after <= 1)
            self.assertIn(occurrence.derivedFrom[0].reference.split("/")[1], thoughts)
        broken = json.loads(lines[0])
        broken["effectiveDateTime"] = "last Tuesday"
        with self.assertRaises(ValidationError):
            Observation.parse_obj(broken)

    def test_the_validator_rejects_a_broken_export(self):
        # fhir.resources checks structure, not code values: a missing required element and an unknown one fail.
        exported = call("GET", "/instruments/gad-7/versions/1?format=fhir", token=self.therapist)
        without_link = json.loads(json.dumps(exported))
        del without_link["item"][0]["item"][0]["linkId"]
        with self.assertRaises(ValidationError):
            Questionnaire.parse_obj(without_link)
        unknown = json.loads(json.dumps(exported))
        unknown["item"][0]["answerOptions"] = []
        with self.assertRaises(ValidationError):
            Questionnaire.parse_obj(unknown)


if __name__ == "__main__":
    unittest.main()
