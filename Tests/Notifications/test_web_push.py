"""Web Push from the running server to a push endpoint on loopback, decrypted with an independent library.

The browser's side is played here: a P-256 key pair and an auth secret make the subscription; the message that
arrives is decrypted with `http_ece` (RFC 8188 aes128gcm, as RFC 8291 uses it) and the VAPID token is verified
with `cryptography` against the key the server publishes. A subscription the push service reports gone is
disabled and the patient gets an email instead.

Started by scripts/test with INTERLUDE_URL, INTERLUDE_DATA_DIR and INTERLUDE_BIN set, against a server that
allows loopback push endpoints and dispatches every second.
"""
import base64
import json
import os
import sys
import time
import unittest
import urllib.request
import uuid

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from interlude_e2e import API, BASE, call, iso, pair, patient_token, staff_token  # noqa: E402
from push_endpoint import PushEndpoint  # noqa: E402


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class WebPushTest(unittest.TestCase):
    def setUp(self):
        self.endpoint = PushEndpoint()
        suffix = uuid.uuid4().hex[:8]
        self.therapist = staff_token(f"push-therapist-{suffix}@example.org", "therapist", "a long enough password")
        self.address = f"push-patient-{suffix}@example.org"
        self.patient = patient_token(self.address, "a long enough password")
        self.patient_id = pair(self.patient, self.therapist)

    def tearDown(self):
        self.endpoint.stop()

    def subscribe(self, path):
        key = ec.generate_private_key(ec.SECP256R1())
        auth = os.urandom(16)
        public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        device = call("POST", "/me/devices", {
            "platform": "webpush",
            "subscription": {"endpoint": self.endpoint.url + path, "keys": {"p256dh": b64url(public), "auth": b64url(auth)}},
        }, token=self.patient)
        return key, auth, device

    def assign_now(self):
        return call("POST", f"/patients/{self.patient_id}/prompts", {
            "instrumentKey": "who-5", "opensAt": iso(), "closesAt": iso(24 * 60),
        }, token=self.therapist)

    def test_message_decrypts_and_the_vapid_token_verifies(self):
        key, auth, _ = self.subscribe("/push/browser")
        prompt = self.assign_now()
        path, headers, body = self.endpoint.wait_for("/push/browser")
        self.assertEqual(headers.get("Content-Encoding"), "aes128gcm")
        self.assertTrue(headers.get("Topic"))

        payload = json.loads(http_ece.decrypt(body, private_key=key, auth_secret=auth, version="aes128gcm"))
        self.assertEqual(payload["path"], f"/app/questionnaires/{prompt['id']}")
        self.assertEqual(payload["title"], "A questionnaire is waiting for you")

        scheme, _, parameters = headers["Authorization"].partition(" ")
        self.assertEqual(scheme, "vapid")
        fields = dict(part.strip().split("=", 1) for part in parameters.split(","))
        self.assertEqual(fields["k"], call("GET", "/push/public-key")["publicKey"])
        header, claims, signature = fields["t"].split(".")
        server_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(fields["k"]))
        raw = unb64url(signature)
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        try:
            server_key.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            self.fail("the VAPID token's signature does not verify with the published key")
        decoded = json.loads(unb64url(claims))
        self.assertEqual(decoded["aud"], self.endpoint.url)
        self.assertGreater(decoded["exp"], time.time())
        self.assertLessEqual(decoded["exp"], time.time() + 24 * 3600)

        request = urllib.request.Request(BASE + payload["click"], method="POST", data=b"")
        with urllib.request.urlopen(request) as response:
            self.assertEqual(response.status, 204)
        history = call("GET", f"/patients/{self.patient_id}/notifications", token=self.therapist)
        self.assertTrue(history["reachableByPush"])
        self.assertEqual(history["notifications"][0]["status"], "clicked")

    def test_a_gone_subscription_is_disabled_and_email_takes_over(self):
        _, _, device = self.subscribe("/gone/browser")
        self.assign_now()
        self.endpoint.wait_for("/gone/browser")
        deadline = time.time() + 30
        while time.time() < deadline:
            devices = call("GET", "/me/devices", token=self.patient)
            history = call("GET", f"/patients/{self.patient_id}/notifications", token=self.therapist)
            if not devices[0]["active"] and history["notifications"] and history["notifications"][0]["status"] == "sent":
                break
            time.sleep(0.3)
        self.assertEqual(devices[0]["id"], device["id"])
        self.assertFalse(devices[0]["active"])
        self.assertFalse(history["reachableByPush"])
        self.assertEqual(history["notifications"][0]["channel"], "email")


if __name__ == "__main__":
    unittest.main()
