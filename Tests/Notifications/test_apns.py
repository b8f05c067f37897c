"""APNs from the running server to a local HTTP/2 endpoint over TLS, as Apple's provider API takes it.

The endpoint (hypercorn, HTTP/2 only) records each request; the provider token is verified with `cryptography`
against the public half of the .p8 key the server signs with. A token the endpoint answers 410 Unregistered for
is disabled.

Started by scripts/test with APNS_ENDPOINT, APNS_KEY_FILE, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC and
APNS_ENDPOINT_CERT / APNS_ENDPOINT_KEY naming the endpoint's certificate, which the server trusts.
"""
import asyncio
import base64
import json
import os
import sys
import threading
import time
import unittest
import urllib.parse
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from hypercorn.asyncio import serve
from hypercorn.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from interlude_e2e import call, iso, pair, patient_token, staff_token  # noqa: E402

GONE_TOKEN = "ab" * 32


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class APNsEndpoint:
    def __init__(self):
        self.received = []
        self.stopping = None
        endpoint = self

        async def app(scope, receive, send):
            if scope["type"] != "http":
                return
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            headers = {key.decode(): value.decode() for key, value in scope["headers"]}
            endpoint.received.append((scope["http_version"], scope["path"], headers, body))
            gone = scope["path"].endswith(GONE_TOKEN)
            answer = json.dumps({"reason": "Unregistered"}).encode() if gone else b""
            await send({"type": "http.response.start", "status": 410 if gone else 200,
                        "headers": [(b"apns-id", str(uuid.uuid4()).encode())]})
            await send({"type": "http.response.body", "body": answer})

        config = Config()
        port = urllib.parse.urlparse(os.environ["APNS_ENDPOINT"]).port
        config.bind = [f"127.0.0.1:{port}"]
        config.certfile = os.environ["APNS_ENDPOINT_CERT"]
        config.keyfile = os.environ["APNS_ENDPOINT_KEY"]
        config.alpn_protocols = ["h2"]
        config.errorlog = None
        ready = threading.Event()

        def run():
            loop = asyncio.new_event_loop()
            self.loop = loop
            self.stopping = asyncio.Event()
            ready.set()
            loop.run_until_complete(serve(app, config, shutdown_trigger=self.stopping.wait))

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait()
        time.sleep(0.5)

    def wait_for(self, token, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for item in self.received:
                if item[1] == f"/3/device/{token}":
                    return item
            time.sleep(0.2)
        raise AssertionError(f"nothing arrived for {token}")

    def stop(self):
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(timeout=5)


class APNsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.endpoint = APNsEndpoint()

    @classmethod
    def tearDownClass(cls):
        cls.endpoint.stop()

    def setUp(self):
        suffix = uuid.uuid4().hex[:8]
        self.therapist = staff_token(f"apns-therapist-{suffix}@example.org", "therapist", "a long enough password")
        self.patient = patient_token(f"apns-patient-{suffix}@example.org", "a long enough password")
        self.patient_id = pair(self.patient, self.therapist)

    def assign_now(self):
        return call("POST", f"/patients/{self.patient_id}/prompts", {
            "instrumentKey": "who-5", "opensAt": iso(), "closesAt": iso(24 * 60),
        }, token=self.therapist)

    def test_request_over_http2_with_a_provider_token_that_verifies(self):
        token = uuid.uuid4().hex + uuid.uuid4().hex
        call("POST", "/me/devices", {"platform": "apns", "token": token}, token=self.patient)
        prompt = self.assign_now()
        version, _, headers, body = self.endpoint.wait_for(token)
        self.assertEqual(version, "2")
        self.assertEqual(headers["apns-topic"], os.environ["APNS_TOPIC"])
        self.assertEqual(headers["apns-push-type"], "alert")
        self.assertTrue(headers["apns-collapse-id"])
        self.assertGreater(int(headers["apns-expiration"]), time.time())
        payload = json.loads(body)
        self.assertEqual(payload["aps"]["alert"]["title"], "A questionnaire is waiting for you")
        self.assertEqual(payload["path"], f"/app/questionnaires/{prompt['id']}")

        scheme, _, jwt = headers["authorization"].partition(" ")
        self.assertEqual(scheme, "bearer")
        header, claims, signature = jwt.split(".")
        decoded_header = json.loads(unb64url(header))
        self.assertEqual((decoded_header["alg"], decoded_header["kid"]), ("ES256", os.environ["APNS_KEY_ID"]))
        decoded = json.loads(unb64url(claims))
        self.assertEqual(decoded["iss"], os.environ["APNS_TEAM_ID"])
        self.assertLess(abs(decoded["iat"] - time.time()), 3600)
        with open(os.environ["APNS_KEY_FILE"], "rb") as handle:
            key = serialization.load_pem_private_key(handle.read(), password=None).public_key()
        raw = unb64url(signature)
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        try:
            key.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            self.fail("the provider token's signature does not verify with the .p8 key")

        history = call("GET", f"/patients/{self.patient_id}/notifications", token=self.therapist)
        self.assertEqual(history["notifications"][0]["channel"], "apns")

    def test_an_unregistered_token_is_disabled(self):
        call("POST", "/me/devices", {"platform": "apns", "token": GONE_TOKEN}, token=self.patient)
        self.assign_now()
        self.endpoint.wait_for(GONE_TOKEN)
        deadline = time.time() + 30
        while time.time() < deadline:
            devices = call("GET", "/me/devices", token=self.patient)
            if not devices[0]["active"]:
                break
            time.sleep(0.3)
        self.assertFalse(devices[0]["active"])


if __name__ == "__main__":
    unittest.main()
