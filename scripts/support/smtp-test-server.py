#!/usr/bin/env python3
"""A real SMTP server for the test suite, built on aiosmtpd.

Listens on two ports: the first offers STARTTLS and AUTH PLAIN and LOGIN, the second STARTTLS and AUTH LOGIN
only. Both require TLS before authentication and authentication before mail. Every accepted message is written
to the mail directory as <n>.eml next to <n>.json, which holds the envelope and the mechanism used.
Prints one line, "ready", once both ports accept connections.
"""
import argparse
import asyncio
import datetime
import ipaddress
import json
import os
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword, SMTP
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def make_certificate(directory):
    """A self-signed certificate for 127.0.0.1 and localhost; the test trusts it through SMTP_CA_FILE."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = os.path.join(directory, "smtp-cert.pem")
    key_path = os.path.join(directory, "smtp-key.pem")
    with open(cert_path, "wb") as handle:
        handle.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as handle:
        handle.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    return cert_path, key_path


class Store:
    def __init__(self, directory):
        self.directory = directory
        self.lock = threading.Lock()
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            number = self.count
        base = os.path.join(self.directory, f"{number:04d}")
        with open(base + ".eml", "wb") as handle:
            handle.write(envelope.original_content)
        # The envelope appears whole or not at all: tests read every .json while other messages arrive.
        with open(base + ".json.partial", "w") as handle:
            json.dump(
                {
                    "mailFrom": envelope.mail_from,
                    "rcptTos": envelope.rcpt_tos,
                    "authenticated": session.authenticated,
                    "mechanism": getattr(session, "auth_mechanism", None),
                    "tls": session.ssl is not None,
                    "port": server.port,
                },
                handle,
            )
        os.replace(base + ".json.partial", base + ".json")
        return "250 OK"


class Authenticator:
    def __init__(self, username, password):
        self.username = username.encode()
        self.password = password.encode()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        session.auth_mechanism = mechanism
        ok = isinstance(auth_data, LoginPassword) and auth_data.login == self.username and auth_data.password == self.password
        return AuthResult(success=ok, handled=False)


class PortSMTP(SMTP):
    def __init__(self, *args, port, **kwargs):
        super().__init__(*args, **kwargs)
        self.port = port


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--login-only-port", type=int, required=True)
    parser.add_argument("--directory", required=True)
    parser.add_argument("--username", default="interlude")
    parser.add_argument("--password", default="test-secret")
    arguments = parser.parse_args()

    cert_path, key_path = make_certificate(arguments.directory)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_path, key_path)
    store = Store(arguments.directory)
    authenticator = Authenticator(arguments.username, arguments.password)

    class Factory(Controller):
        def __init__(self, port, exclude):
            self.exclude = exclude
            super().__init__(
                store,
                hostname="127.0.0.1",
                port=port,
                tls_context=context,
                require_starttls=True,
                auth_require_tls=True,
                auth_required=True,
                authenticator=authenticator,
            )

        def factory(self):
            return PortSMTP(
                self.handler,
                port=self.port,
                tls_context=context,
                require_starttls=True,
                auth_require_tls=True,
                auth_required=True,
                authenticator=authenticator,
                auth_exclude_mechanism=self.exclude,
                hostname="smtp.test",
            )

    controllers = [Factory(arguments.port, []), Factory(arguments.login_only_port, ["PLAIN"])]
    for controller in controllers:
        controller.start()
    print("ready", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        for controller in controllers:
            controller.stop()


if __name__ == "__main__":
    sys.exit(main())
