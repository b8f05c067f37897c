"""Helpers for the tests that run against a started server (scripts/test sets INTERLUDE_URL, INTERLUDE_DATA_DIR and
INTERLUDE_BIN): API calls, links from the email outbox, and accounts to work with."""
import datetime
import email
import email.policy
import glob
import io
import json
import os
import random
import re
import subprocess
import time
import urllib.request
import uuid
import zipfile

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


def demo(template):
    """Runs `interlude demo --template`; answers the accounts it printed, by role, as (email, password)."""
    output = subprocess.run(
        [os.environ["INTERLUDE_BIN"], "demo", "--template", template], check=True, capture_output=True, text=True,
    ).stdout
    lines = re.findall(r"^(therapist|patient|researcher): (\S+@\S+) (\S+)$", output, re.MULTILINE)
    return {role: (email, password) for role, email, password in lines}


def sign_in(account):
    email, password = account
    return call("POST", "/sessions", {"email": email, "password": password}, client="198.51.100.40")["token"]


def shown(condition, answers):
    """Whether a condition of equal answers (the only kind these helpers meet) holds for the answers so far."""
    if not condition:
        return True
    met = [clause["operator"] == "equals" and answers.get(clause["item"]) == clause["value"] for clause in condition["clauses"]]
    return all(met) if condition.get("mode", "all") == "all" else any(met)


def answers_for(definition):
    """A valid answer to every item of an instrument definition that is shown, in order: an item a chosen answer
    shows (an "other, namely" field after "other") is answered too."""
    answers = {}
    for section in definition["sections"]:
        if section.get("visibleWhen"):
            continue
        for item in section["items"]:
            if not shown(item.get("visibleWhen"), answers) or item["type"] == "display":
                continue
            options = item.get("options") or section.get("options") or []
            kind = item["type"]
            if kind == "single":
                answers[item["id"]] = options[-1]["code"]
            elif kind == "multiple":
                answers[item["id"]] = [options[0]["code"]]
            elif kind in ("slider", "scale", "number"):
                answers[item["id"]] = item.get("max", 1)
            elif kind == "boolean":
                answers[item["id"]] = True
            elif kind == "text":
                answers[item["id"]] = "fine"
            elif kind == "date":
                answers[item["id"]] = "2024-06-01"
    return answers


def answer_open_prompts(patient):
    """The patient answers every prompt open now; answers how many."""
    count = 0
    for prompt in call("GET", "/me/prompts", token=patient):
        definition = call("GET", f"/me/prompts/{prompt['id']}", token=patient)["definition"]
        call("POST", "/me/responses", {
            "id": str(uuid.uuid4()), "promptId": prompt["id"], "instrumentKey": prompt["instrumentKey"],
            "version": prompt["instrumentVersion"], "answers": answers_for(definition), "startedAt": iso(-1),
            "completedAt": iso(),
        }, token=patient)
        count += 1
    return count


def raw(method, path, token):
    """The bytes of an API answer, for a zip."""
    request = urllib.request.Request(API + path, method=method, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request) as response:
        return response.read()


def send_bytes(method, path, data, headers, token):
    """Bytes sent as they are (a gzipped batch, a file's part); answers the JSON reply."""
    request = urllib.request.Request(API + path, method=method, data=data, headers={"Authorization": "Bearer " + token, **headers})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read().decode())


def export_zip(token, study):
    """Asks for an export of `study`, waits until the server's job has written it, and opens the zip."""
    export = json.loads(raw("POST", f"/studies/{study}/exports", token))
    deadline = time.monotonic() + 120
    while export["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.5)
        export = json.loads(raw("GET", f"/exports/{export['id']}", token))
    assert export["status"] == "ready", export
    return zipfile.ZipFile(io.BytesIO(raw("GET", f"/exports/{export['id']}/file", token)))


def own_copy_zip(token):
    """Asks for the person's own copy of their data, waits until the server's job has written it, and opens it."""
    status = json.loads(raw("POST", "/me/export", token))
    deadline = time.monotonic() + 120
    while status["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.5)
        status = json.loads(raw("GET", "/me/export/status", token))
    assert status["status"] == "ready", status
    return zipfile.ZipFile(io.BytesIO(raw("GET", "/me/export", token)))
