"""OpenAPI conformance under fuzzing: schemathesis generates requests from the served contract and checks that
no answer is a server error and every answer matches the schema, signed in as a patient and as a therapist.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set. With FUZZ_TAGS set (tags of the
contract, separated by spaces) the patient's run covers those tags only and the therapist's is skipped: scripts/test
fuzzes a server with the API's fast paths off that way, on the operations they replace.
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from interlude_e2e import API, patient_token, staff_token

ONLY_TAGS = os.environ.get("FUZZ_TAGS", "").split()

CHECKS = "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance"


def schemathesis(token, client, *options):
    """Runs schemathesis as one client (the server trusts X-Forwarded-For in this test set-up)."""
    command = [
        os.path.join(os.path.dirname(sys.executable), "schemathesis"), "run", API + "/openapi.yaml", "--url", API,
        "-H", f"Authorization: Bearer {token}", "-H", f"X-Forwarded-For: {client}",
        "--checks", CHECKS, "--max-examples", "25", "--seed", "1",
        # Operations that end the session or the account would stop the run early.
        "--exclude-operation-id", "deleteMe", "--exclude-operation-id", "logout",
        "--exclude-operation-id", "changePassword", *options,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


class OpenAPIFuzzingTest(unittest.TestCase):
    def test_as_patient(self):
        client = "198.51.100.1"
        token = patient_token("fuzzing-patient@example.org", "fuzzing passphrase 1", client=client)
        result = schemathesis(token, client, *[option for tag in ONLY_TAGS for option in ("--include-tag", tag)])
        self.assertEqual(result.returncode, 0, result.stdout[-6000:] + result.stderr[-2000:])
        self.assertRegex(result.stdout, r"\d+ generated, \d+ passed")

    @unittest.skipIf(ONLY_TAGS, "FUZZ_TAGS limits the run to the patient's operations of those tags")
    def test_as_therapist(self):
        client = "198.51.100.2"
        token = staff_token("fuzzing-therapist@example.org", "therapist", "fuzzing passphrase 2", client=client)
        result = schemathesis(token, client, "--include-tag", "pairing", "--include-tag", "caseload", "--include-tag", "studies",
                              "--include-tag", "instruments", "--include-tag", "questionnaires")
        self.assertEqual(result.returncode, 0, result.stdout[-6000:] + result.stderr[-2000:])


if __name__ == "__main__":
    unittest.main()
