"""Two servers and a worker on one PostgreSQL, under load.

Two `interlude serve` processes and one `interlude worker` share a PostgreSQL schema, each with a data directory of
its own (as on three machines) and the one data key, with
the planner and the dispatcher running every second in all three. A round-robin proxy of this test spreads the
requests over the two servers: participants register Web Push subscriptions at a push endpoint of this test,
the therapist assigns questionnaires, participants pull /sync, all at once. Then every prompt of the practice's
plan is planned once, every notification arrives once, and no request answered 5xx.
"""
import base64
import collections
import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import threading
import time
import unittest

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from durability_support import BIN, POSTGRES_URL, Database, Server, iso, request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Support"))

from push_endpoint import PushEndpoint  # noqa: E402

PARTICIPANTS = 30
ASSIGNED = 3


class RoundRobinProxy:
    """Hands each incoming connection to the next server in turn and copies bytes both ways."""

    def __init__(self, ports):
        self.ports = ports
        self.turn = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.served = collections.Counter()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                incoming, _ = self.listener.accept()
            except OSError:
                return
            port = self.ports[self.turn % len(self.ports)]
            self.turn += 1
            self.served[port] += 1
            outgoing = socket.create_connection(("127.0.0.1", port))
            for source, target in ((incoming, outgoing), (outgoing, incoming)):
                threading.Thread(target=self.copy, args=(source, target), daemon=True).start()

    @staticmethod
    def copy(source, target):
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.listener.close()


def subscription(endpoint):
    key = ec.generate_private_key(ec.SECP256R1()).public_key()
    point = key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    encode = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()  # noqa: E731
    return {"endpoint": endpoint, "keys": {"p256dh": encode(point), "auth": encode(os.urandom(16))}}


@unittest.skipUnless(POSTGRES_URL, "DURABILITY_DATABASE_URL names no PostgreSQL server")
class TwoServersTest(unittest.TestCase):
    def test_planned_once_sent_once_no_server_errors(self):
        database = Database("postgres")
        self.addCleanup(database.drop)
        fixtures = os.path.join(database.directory, "cluster.json")
        subprocess.run(
            [BIN, "benchmark", "cluster-fixtures", "--participants", str(PARTICIPANTS), "--requests", fixtures],
            env=database.environment(), check=True, capture_output=True)
        with open(fixtures) as file:
            people = json.load(file)
        push = PushEndpoint()
        self.addCleanup(push.stop)
        settings = {"PLANNER_INTERVAL": "1", "DISPATCH_INTERVAL": "1", "WEBPUSH_ALLOW_LOOPBACK": "1"}
        # Three machines: each process with a data directory of its own.
        processes = [Server(database, directory=database.machine(), **settings) for _ in range(2)]
        processes.append(Server(database, "worker", directory=database.machine(), **settings))
        for process in processes:
            self.addCleanup(process.stop)
        proxy = RoundRobinProxy([processes[0].port, processes[1].port])
        self.addCleanup(proxy.close)

        statuses = collections.Counter()
        failures = []

        def call(method, path, body, token, expected):
            status, answer = request(proxy.port, method, "/api/v1" + path, body, token=token)
            statuses[status] += 1
            if status != expected:
                failures.append((method, path, status, answer))
            return answer

        def participant(person):
            call("POST", "/me/devices", {"platform": "webpush", "subscription": subscription(
                f"{push.url}/push/{person['id']}")}, person["token"], 201)
            for _ in range(ASSIGNED):
                call("POST", f"/patients/{person['id']}/prompts", {
                    "instrumentKey": "who-5", "opensAt": iso(), "closesAt": iso(86_400)}, people["therapist"], 201)
                call("GET", "/sync", None, person["token"], 200)

        with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(participant, people["participants"]))
        self.assertEqual(failures, [])
        self.assertGreater(min(proxy.served.values()), PARTICIPANTS, "both servers took requests")

        expected = PARTICIPANTS * ASSIGNED
        deadline = time.time() + 90
        while time.time() < deadline and len(push.received) < expected:
            time.sleep(0.5)
        time.sleep(3)  # a duplicate would come within the next dispatch rounds
        # One topic per notification: a message counted twice under its subscription and topic came twice.
        arrived = collections.Counter((path, headers.get("Topic")) for path, headers, _ in push.received)
        sent = int(database.psql(
            f"SELECT COUNT(*) FROM {database.schema}.notifications WHERE channel = 'webpush' AND sent_at IS NOT NULL"))
        self.assertGreaterEqual(len(arrived), expected)
        self.assertEqual(len(arrived), sent, "each notification sent once is one message")
        self.assertEqual([key for key, count in arrived.items() if count > 1], [], "a notification arrived twice")

        planned = database.psql(
            f"SELECT patient_id, plan_id, occurrence, COUNT(*) FROM {database.schema}.prompts "
            "WHERE plan_id IS NOT NULL GROUP BY patient_id, plan_id, occurrence").split()
        per_patient = collections.Counter(line.split("|")[0] for line in planned)
        self.assertEqual([line for line in planned if not line.endswith("|1")], [], "a prompt was planned twice")
        self.assertEqual(len(per_patient), PARTICIPANTS, "the plan reached every participant")
        # The Daily opens three times a day at random moments inside its windows, 14 days ahead: a window that the
        # present moment or the end of the horizon cuts may or may not hold a participant's prompt, but no more.
        expected_each = 3 * 14
        self.assertEqual(
            [count for count in per_patient.values() if abs(count - expected_each) > 3], [],
            f"every participant has the plan's prompts: {per_patient}")
        self.assertEqual([status for status in statuses if status >= 500], [])


if __name__ == "__main__":
    unittest.main()
