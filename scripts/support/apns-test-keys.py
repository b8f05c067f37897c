"""Writes what the APNs test needs into a folder: a token signing key (.p8, as Apple issues it) and a
certificate for a local HTTP/2 endpoint at 127.0.0.1, which the server is told to trust.

Usage: python apns-test-keys.py FOLDER
"""
import datetime
import ipaddress
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)

signing = ec.generate_private_key(ec.SECP256R1())
with open(os.path.join(folder, "apns-key.p8"), "wb") as handle:
    handle.write(signing.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

tls_key = ec.generate_private_key(ec.SECP256R1())
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Interlude APNs test endpoint")])
now = datetime.datetime.now(datetime.timezone.utc)
certificate = (
    x509.CertificateBuilder()
    .subject_name(name)
    .issuer_name(name)
    .public_key(tls_key.public_key())
    .serial_number(x509.random_serial_number())
    .not_valid_before(now - datetime.timedelta(minutes=5))
    .not_valid_after(now + datetime.timedelta(days=2))
    .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    .sign(tls_key, hashes.SHA256())
)
with open(os.path.join(folder, "apns-endpoint.pem"), "wb") as handle:
    handle.write(certificate.public_bytes(serialization.Encoding.PEM))
with open(os.path.join(folder, "apns-endpoint-key.pem"), "wb") as handle:
    handle.write(tls_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
