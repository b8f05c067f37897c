"""Helpers for the tests that run against a started server (scripts/test sets INTERLUDE_URL, INTERLUDE_DATA_DIR and
INTERLUDE_BIN): API calls, links from the email outbox, and accounts to work with."""
import datetime
import email
import email.policy
import glob
import json
import os
import random
import re
import subprocess
import urllib.request

BASE = os.environ["INTERLUDE_URL"]
API = BASE + "/api/v1"
DATA = os.environ["INTERLUDE_DATA_DIR"]


def call(method, path, body=None, token=None, client="198.51.100.20"):
    """One API call; the server trusts X-Forwarded-For in the test set-up, so `client` keeps rate limits apart."""
    request = urllib.request.Request(API + path, method=method)
    request.add_header("Content-Type", "application/json")
    request.add_header("X-Forwarded-For", client)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(request, data) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


def link_in_outbox(recipient, path):
    """The newest link to `path` in an email to `recipient` written to the outbox."""
    for name in sorted(glob.glob(os.path.join(DATA, "outbox", "*.eml")), reverse=True):
        with open(name, "rb") as handle:
            message = email.message_from_binary_file(handle, policy=email.policy.default)
        if message["To"] != recipient:
            continue
        text = message.get_body(preferencelist=("plain",)).get_content()
        match = re.search(re.escape(BASE) + re.escape(path) + r"\?token=[A-Za-z0-9_-]+", text)
        if match:
            return match.group(0)
    raise AssertionError(f"no {path} link for {recipient} in the outbox")


def staff_token(address, role, password, client="198.51.100.20"):
    """Creates a staff account with `interlude user create` and signs it in."""
    subprocess.run(
        [os.environ["INTERLUDE_BIN"], "user", "create", "--email", address, "--role", role, "--password", password],
        check=True, capture_output=True,
    )
    return call("POST", "/sessions", {"email": address, "password": password}, client=client)["token"]


def fresh_client():
    """An address no other request came from: each patient registers from a phone of their own."""
    return f"198.18.{random.randrange(256)}.{random.randrange(1, 255)}"


def patient_token(address, password, locale="en", client=None):
    """Registers a patient, confirms the address through the emailed link and signs in."""
    client = client or fresh_client()
    call("POST", "/accounts", {
        "email": address, "password": password, "privacyPolicyVersion": "1", "shareWithResearch": True,
        "locale": locale, "timeZone": "Europe/Vienna",
    }, client=client)
    token = link_in_outbox(address, "/app/verify").split("token=")[1]
    call("POST", "/accounts/verification", {"token": token}, client=client)
    return call("POST", "/sessions", {"email": address, "password": password}, client=client)["token"]


def pair(patient, therapist):
    """Pairs the patient with the therapist through a fresh code; returns the patient's id."""
    code = call("POST", "/pairing-codes", {"count": 1}, token=therapist)[0]["code"]
    call("POST", "/me/pairing", {"code": code, "dateOfBirth": "1985-02-11", "gender": "diverse"}, token=patient)
    return call("GET", "/me", token=patient)["id"]


def iso(minutes_from_now=0):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=minutes_from_now)
    return moment.replace(microsecond=0).isoformat()
