"""deploy/nginx.conf, the tested reverse-proxy configuration of docs/operations.md, in front of the running server
(TRUST_PROXY=1): plain HTTP redirects to HTTPS, TLS answers with HSTS, the client's address reaches the rate limits
however the client fills X-Forwarded-For, and bodies over the limit stop at the proxy.

Started by scripts/test with INTERLUDE_URL set and nginx installed.
"""
import datetime
import gzip
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import unittest
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

PACKAGE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOST = "interlude.example.org"
CLIENT = "127.0.0.77"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def certificate(directory):
    """A self-signed certificate for the configuration's host name."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.timezone.utc)
    built = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert, private = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    with open(cert, "wb") as handle:
        handle.write(built.public_bytes(serialization.Encoding.PEM))
    with open(private, "wb") as handle:
        handle.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return cert, private


@unittest.skipUnless(shutil.which("nginx") or os.environ.get("CI") == "true", "nginx is not installed")
class ReverseProxyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.prefix = tempfile.mkdtemp(prefix="interlude-nginx-")
        os.chmod(cls.prefix, 0o755)
        cls.cert, key = certificate(cls.prefix)
        cls.http_port, cls.https_port = free_port(), free_port()
        upstream = urllib.parse.urlsplit(os.environ["INTERLUDE_URL"]).port
        with open(os.path.join(PACKAGE, "deploy", "nginx.conf"), encoding="utf-8") as handle:
            site = handle.read()
        for old, new in [
            ("server 127.0.0.1:8080;", f"server 127.0.0.1:{upstream};"),
            ("listen 80;", f"listen 127.0.0.1:{cls.http_port};"),
            ("listen 443 ssl http2;", f"listen 127.0.0.1:{cls.https_port} ssl http2;"),
            (f"/etc/letsencrypt/live/{HOST}/fullchain.pem", cls.cert),
            (f"/etc/letsencrypt/live/{HOST}/privkey.pem", key),
        ]:
            assert old in site, old
            site = site.replace(old, new)
        with open(os.path.join(cls.prefix, "interlude.conf"), "w", encoding="utf-8") as handle:
            handle.write(site)
        temp = os.path.join(cls.prefix, "temp")
        with open(os.path.join(cls.prefix, "nginx.conf"), "w", encoding="utf-8") as handle:
            handle.write(
                f"daemon off;\nworker_processes 1;\npid {cls.prefix}/nginx.pid;\nerror_log {cls.prefix}/error.log;\n"
                "events {}\nhttp {\n"
                f"  access_log {cls.prefix}/access.log;\n  client_body_temp_path {temp}/body;\n"
                f"  proxy_temp_path {temp}/proxy;\n  fastcgi_temp_path {temp}/fastcgi;\n  uwsgi_temp_path {temp}/uwsgi;\n"
                f"  scgi_temp_path {temp}/scgi;\n  include {cls.prefix}/interlude.conf;\n}}\n")
        os.makedirs(temp)
        cls.nginx = subprocess.Popen([shutil.which("nginx"), "-p", cls.prefix, "-c", os.path.join(cls.prefix, "nginx.conf")],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", cls.https_port), timeout=1).close()
                break
            except OSError:
                if cls.nginx.poll() is not None:
                    raise AssertionError(cls.nginx.stdout.read().decode())
                time.sleep(0.1)

    @classmethod
    def tearDownClass(cls):
        cls.nginx.terminate()
        cls.nginx.wait(timeout=30)
        shutil.rmtree(cls.prefix, ignore_errors=True)

    def https(self, method, path, body=None, headers=None):
        context = ssl.create_default_context(cafile=self.cert)
        connection = http.client.HTTPSConnection("127.0.0.1", self.https_port, context=context, timeout=60)
        # The certificate names the host, as a real one would; the connection goes to loopback.
        # From a loopback address of its own: the server counts this test's failed sign-ins against it, not against
        # 127.0.0.1, which the browser tests later sign in from.
        raw = socket.create_connection(("127.0.0.1", self.https_port), source_address=(CLIENT, 0))
        connection.sock = context.wrap_socket(raw, server_hostname=HOST)
        try:
            connection.request(method, path, body=body, headers={"Host": HOST, **(headers or {})})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def test_plain_http_is_sent_to_https(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=30, source_address=(CLIENT, 0))
        connection.request("GET", "/app?x=1", headers={"Host": HOST})
        response = connection.getresponse()
        self.assertEqual(response.status, 301)
        self.assertEqual(response.getheader("Location"), f"https://{HOST}/app?x=1")
        connection.close()

    def test_tls_answers_with_strict_transport_security(self):
        status, headers, _ = self.https("GET", "/ready")
        self.assertEqual(status, 200)
        self.assertIn("max-age=", headers.get("Strict-Transport-Security", ""))
        status, _, body = self.https("GET", "/")
        self.assertEqual(status, 200)
        self.assertIn(b'href="/console"', body)

    def test_a_client_cannot_escape_the_rate_limit_by_naming_other_addresses(self):
        credentials = json.dumps({"email": "nobody-behind-the-proxy@example.org", "password": "wrong password 1"})
        statuses = []
        for attempt in range(11):
            status, headers, _ = self.https(
                "POST", "/api/v1/sessions", body=credentials,
                headers={"Content-Type": "application/json", "X-Forwarded-For": f"203.0.113.{attempt + 1}"})
            statuses.append(status)
        # Ten refusals at most (fewer when this address failed before), then the limit, whatever the header said.
        self.assertEqual(set(statuses[:10]) - {401, 429}, set(), statuses)
        self.assertEqual(statuses[10], 429, statuses)

    def test_a_body_over_the_limit_stops_at_the_proxy(self):
        status, headers, body = self.https("POST", "/api/v1/accounts", body=b"x" * (7 * 1024 * 1024),
                                           headers={"Content-Type": "application/json"})
        self.assertEqual(status, 413)
        # nginx's own answer: the server never had to read the body.
        self.assertIn(b"nginx", body)
        self.assertNotIn("problem+json", headers.get("Content-Type", ""))

    def test_styles_come_compressed_and_cached_as_their_address_allows_pages_do_not(self):
        def fetch(path, **headers):
            status, answer, body = self.https("GET", path, headers=headers)
            return status, {name.lower(): value for name, value in answer.items()}, body

        status, headers, body = fetch("/css/interlude.css", **{"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("content-encoding"), "gzip")
        self.assertEqual(headers.get("cache-control"), "no-cache")
        with open(os.path.join(PACKAGE, "Public", "css", "interlude.css"), "rb") as handle:
            self.assertEqual(gzip.decompress(body), handle.read())
        status, headers, _ = fetch("/css/interlude.css")
        self.assertNotIn("content-encoding", headers)
        status, headers, page = fetch("/app/login", **{"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        self.assertNotIn("content-encoding", headers)
        # The page names this release's styles under their version: compressed too, and kept for a year.
        versioned = re.search(rb'href="(/assets/[0-9a-f]{12}/css/interlude\.css)"', page).group(1).decode()
        status, headers, _ = fetch(versioned, **{"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("content-encoding"), "gzip")
        self.assertEqual(headers.get("cache-control"), "public, max-age=31536000, immutable")


if __name__ == "__main__":
    unittest.main()
