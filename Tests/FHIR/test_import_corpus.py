"""The import corpus against a running server: each questionnaire file of Tests/Corpus is imported through the API,
compared item by item with what Tests/Corpus/manifest.json says the file holds, published, answered by a patient, and
exported as FHIR R4 that fhir.resources (4.0.1) accepts; a file Interlude cannot run is refused at its place.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set.
"""
import json
import os
import sys
import unittest
import urllib.error
import urllib.request
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from fhir.resources.questionnaire import Questionnaire
from fhir.resources.questionnaireresponse import QuestionnaireResponse
from interlude_e2e import API, call, iso, pair, patient_token, staff_token

CORPUS = os.path.join(os.path.dirname(__file__), "..", "Corpus")


def upload(path, token):
    """Imports a file for the whole installation and publishes it: the status and the JSON reply."""
    with open(os.path.join(CORPUS, path), "rb") as handle:
        data = handle.read()
    content_type = "text/csv" if path.endswith(".csv") else "application/fhir+json"
    request = urllib.request.Request(API + "/instruments?publish=true", method="POST", data=data, headers={
        "Authorization": "Bearer " + token, "Content-Type": content_type, "X-Forwarded-For": "198.51.100.40"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read().decode())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read().decode())


def linked(items):
    """Every linkId of a QuestionnaireResponse's items that carries an answer, groups opened."""
    found = set()
    for item in items or []:
        if item.answer:
            found.add(item.linkId)
        found |= linked(item.item)
    return found


class ImportCorpusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(CORPUS, "manifest.json"), encoding="utf-8") as handle:
            cls.manifest = json.load(handle)
        cls.admin = staff_token("corpus-admin@example.org", "admin", "corpus passphrase 1")
        cls.therapist = staff_token("corpus-therapist@example.org", "therapist", "corpus passphrase 2")
        cls.patient = patient_token("corpus-patient@example.org", "corpus passphrase 3")
        cls.patient_id = pair(cls.patient, cls.therapist)

    def answer(self, key, version, answers):
        prompt = call("POST", f"/patients/{self.patient_id}/prompts",
                      {"instrumentKey": key, "opensAt": iso(-1), "closesAt": iso(60)}, token=self.therapist)
        self.assertEqual(prompt["instrumentVersion"], version)
        result = call("POST", "/me/responses", {
            "id": str(uuid.uuid4()), "promptId": prompt["id"], "instrumentKey": key, "version": version,
            "answers": answers, "startedAt": iso(-1), "completedAt": iso(),
        }, token=self.patient)
        return result, call("GET", f"/responses/{result['id']}?format=fhir", token=self.therapist)

    def test_every_file_imports_as_written_or_is_refused_by_place(self):
        for entry in self.manifest["files"]:
            with self.subTest(file=entry["file"]):
                status, body = upload(entry["file"], self.admin)
                if "problems" in entry:
                    self.assertEqual(status, 422, body)
                    self.assertEqual([[e["field"], e["code"]] for e in body["errors"]], entry["problems"])
                    self.assertTrue(all(e["detail"] for e in body["errors"]))
                    continue
                self.assertEqual(status, 201, body)
                self.assertEqual([i["key"] for i in body["imported"]], [i["key"] for i in entry["instruments"]])
                self.assertEqual([[n["kind"], n["subject"]] for n in body["notes"]], entry["notes"])
                for summary, expected in zip(body["imported"], entry["instruments"]):
                    self.check_instrument(summary, expected)

    def check_instrument(self, summary, expected):
        key, version = summary["key"], summary["version"]
        self.assertEqual(summary["status"], "published")
        definition = call("GET", f"/instruments/{key}/versions/{version}", token=self.admin)
        self.assertEqual(definition["title"]["en"], expected["title"])
        self.assertEqual([(s.get("title") or {}).get("en") for s in definition["sections"]],
                         [s["title"] for s in expected["sections"]])
        self.assertEqual([[[i["id"], i["type"]] for i in s["items"]] for s in definition["sections"]],
                         [s["items"] for s in expected["sections"]])
        questionnaire = Questionnaire.parse_obj(
            call("GET", f"/instruments/{key}/versions/{version}?format=fhir", token=self.admin))
        self.assertEqual(questionnaire.status, "active")
        result, exported = self.answer(key, version, expected["answers"])
        self.assertEqual({s["id"]: s.get("value") for s in result["scores"] if s.get("value") is not None},
                         expected["scores"])
        response = QuestionnaireResponse.parse_obj(exported)
        self.assertEqual(response.status, "completed")
        # The response names each item by the linkId the file gave it, also where Interlude uses another id.
        link_ids = {item["id"]: item.get("linkId", item["id"]) for s in definition["sections"] for item in s["items"]}
        self.assertEqual(linked(response.item), {link_ids[answered] for answered in expected["answers"]})


if __name__ == "__main__":
    unittest.main()
