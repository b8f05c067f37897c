"""FHIR exports checked by an independent validator: fhir.resources 6.4 (FHIR R4 4.0.1) parses every library
instrument's Questionnaire and the QuestionnaireResponse of real submissions, and rejects a broken one.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set.
"""
import datetime
import email
import email.policy
import glob
import json
import os
import re
import subprocess
import unittest
import urllib.request
import uuid

import fhir.resources
from fhir.resources.questionnaire import Questionnaire
from fhir.resources.questionnaireresponse import QuestionnaireResponse
from pydantic import ValidationError

API = os.environ["INTERLUDE_URL"] + "/api/v1"
DATA = os.environ["INTERLUDE_DATA_DIR"]
LIBRARY = ["phq-9", "gad-7", "who-5", "pss-10", "intersession-daily", "isf-k", "tys-daily", "tys-weekly", "mood-vas"]


def call(method, path, body=None, token=None, client="198.51.100.20"):
    request = urllib.request.Request(API + path, method=method)
    request.add_header("Content-Type", "application/json")
    request.add_header("X-Forwarded-For", client)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(request, data) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


def verification_token(recipient):
    for name in sorted(glob.glob(os.path.join(DATA, "outbox", "*.eml")), reverse=True):
        with open(name, "rb") as handle:
            message = email.message_from_binary_file(handle, policy=email.policy.default)
        if message["To"] == recipient:
            text = message.get_body(preferencelist=("plain",)).get_content()
            return re.search(r"/app/verify\?token=([A-Za-z0-9_-]+)", text).group(1)
    raise AssertionError(f"no verification email for {recipient}")


def now(offset_minutes=0):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=offset_minutes)
    return moment.replace(microsecond=0).isoformat()


class FHIRExportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        assert fhir.resources.__fhir_version__ == "4.0.1", fhir.resources.__fhir_version__
        subprocess.run(
            [os.environ["INTERLUDE_BIN"], "user", "create", "--email", "fhir-therapist@example.org",
             "--role", "therapist", "--password", "fhir passphrase 1"],
            check=True, capture_output=True,
        )
        cls.therapist = call("POST", "/sessions", {"email": "fhir-therapist@example.org", "password": "fhir passphrase 1"})["token"]
        address = "fhir-patient@example.org"
        call("POST", "/accounts", {
            "email": address, "password": "fhir passphrase 2", "privacyPolicyVersion": "1",
            "shareWithResearch": False, "locale": "de", "timeZone": "Europe/Vienna",
        })
        call("POST", "/accounts/verification", {"token": verification_token(address)})
        cls.patient = call("POST", "/sessions", {"email": address, "password": "fhir passphrase 2"})["token"]
        code = call("POST", "/pairing-codes", {"count": 1}, token=cls.therapist)[0]["code"]
        paired = call("POST", "/me/pairing", {"code": code, "dateOfBirth": "1985-02-11", "gender": "diverse"}, token=cls.patient)
        cls.patient_id = call("GET", "/me", token=cls.patient)["id"]
        assert paired["pseudonym"]

    def submit(self, key, answers):
        prompt = call("POST", f"/patients/{self.patient_id}/prompts",
                      {"instrumentKey": key, "opensAt": now(-1), "closesAt": now(60)}, token=self.therapist)
        result = call("POST", "/me/responses", {
            "id": str(uuid.uuid4()), "promptId": prompt["id"], "instrumentKey": key, "version": prompt["instrumentVersion"],
            "answers": answers, "startedAt": now(-1), "completedAt": now(),
        }, token=self.patient)
        return call("GET", f"/responses/{result['id']}?format=fhir", token=self.therapist)

    def test_every_library_questionnaire_is_valid_fhir_r4(self):
        for key in LIBRARY:
            with self.subTest(key=key):
                exported = call("GET", f"/instruments/{key}/versions/1?format=fhir", token=self.therapist)
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
        }
        for key, answers in cases.items():
            with self.subTest(key=key):
                exported = self.submit(key, answers)
                response = QuestionnaireResponse.parse_obj(exported)
                self.assertEqual(response.status, "completed")
                self.assertTrue(response.questionnaire.endswith(f"/fhir/Questionnaire/{key}|1"))
                linked = [item.linkId for group in response.item for item in group.item]
                self.assertTrue(set(answers) <= set(linked), linked)

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
