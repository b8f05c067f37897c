"""OpenAPI conformance under fuzzing: schemathesis generates requests from the served contract and checks that
no answer is a server error and every answer matches the schema, signed in as a patient and as a therapist.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set.
"""
import email
import email.policy
import glob
import json
import os
import re
import subprocess
import sys
import unittest
import urllib.request

BASE = os.environ["INTERLUDE_URL"]
API = BASE + "/api/v1"
DATA = os.environ["INTERLUDE_DATA_DIR"]
CHECKS = "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance"


def call(method, path, client, body):
    request = urllib.request.Request(API + path, method=method)
    request.add_header("Content-Type", "application/json")
    request.add_header("X-Forwarded-For", client)
    with urllib.request.urlopen(request, json.dumps(body).encode()) as response:
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
        address = "fuzzing-patient@example.org"
        client = "198.51.100.1"
        call("POST", "/accounts", client, {
            "email": address, "password": "fuzzing passphrase 1", "privacyPolicyVersion": "1",
            "shareWithResearch": True, "locale": "en", "timeZone": "Europe/Vienna",
        })
        call("POST", "/accounts/verification", client, {"token": verification_token(address)})
        token = call("POST", "/sessions", client, {"email": address, "password": "fuzzing passphrase 1"})["token"]
        result = schemathesis(token, client)
        self.assertEqual(result.returncode, 0, result.stdout[-6000:] + result.stderr[-2000:])
        self.assertRegex(result.stdout, r"\d+ generated, \d+ passed")

    def test_as_therapist(self):
        subprocess.run(
            [os.environ["INTERLUDE_BIN"], "user", "create", "--email", "fuzzing-therapist@example.org",
             "--role", "therapist", "--password", "fuzzing passphrase 2"],
            check=True, capture_output=True,
        )
        client = "198.51.100.2"
        credentials = {"email": "fuzzing-therapist@example.org", "password": "fuzzing passphrase 2"}
        token = call("POST", "/sessions", client, credentials)["token"]
        result = schemathesis(token, client, "--include-tag", "pairing", "--include-tag", "caseload", "--include-tag", "studies")
        self.assertEqual(result.returncode, 0, result.stdout[-6000:] + result.stderr[-2000:])


if __name__ == "__main__":
    unittest.main()
