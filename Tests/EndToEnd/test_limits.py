"""Limits a running server keeps on its own: an API body larger than 5 MB is refused with a 413 problem before
anything reads it whole, whether it announces its length or arrives in chunks.

Started by scripts/test with INTERLUDE_URL set.
"""
import http.client
import json
import unittest
import urllib.parse

from interlude_e2e import BASE

SIX_MEGABYTES = b"x" * (6 * 1024 * 1024)


class BodyLimitTest(unittest.TestCase):
    def post(self, body, chunked):
        url = urllib.parse.urlsplit(BASE)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        headers = {"Content-Type": "application/json", "X-Forwarded-For": "198.51.100.77"}
        try:
            try:
                if chunked:
                    chunks = iter([body[i:i + 65536] for i in range(0, len(body), 65536)])
                    connection.request("POST", "/api/v1/accounts", body=chunks, headers=headers, encode_chunked=True)
                else:
                    connection.request("POST", "/api/v1/accounts", body=body, headers=headers)
            except (BrokenPipeError, ConnectionResetError):
                # The server may answer and stop reading before the whole body is sent; its answer still counts.
                pass
            response = connection.getresponse()
            return response.status, response.getheader("Content-Type") or "", response.read()
        finally:
            connection.close()

    def test_oversized_bodies_are_refused_with_a_problem(self):
        for chunked in (False, True):
            with self.subTest(chunked=chunked):
                status, content_type, body = self.post(b'{"email": "' + SIX_MEGABYTES + b'"}', chunked)
                self.assertEqual(status, 413)
                self.assertIn("problem+json", content_type)
                self.assertEqual(json.loads(body)["status"], 413)

    def test_a_normal_body_still_reaches_the_handler(self):
        status, content_type, body = self.post(b'{"email": "not an address"}', False)
        self.assertEqual(status, 422)
        self.assertIn("problem+json", content_type)


if __name__ == "__main__":
    unittest.main()
