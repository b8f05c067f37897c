"""Kill -9 loses nothing acknowledged, and a stop under load is clean.

32 clients submit questionnaires and push appointments through /sync as fast as the server answers; each keeps
the ids the server acknowledged. At a random moment the server is killed with SIGKILL, started again on the same
database, and every acknowledged id must be there exactly once, and the database must pass its own integrity
check. Several rounds on the same database, on SQLite and (with DURABILITY_DATABASE_URL) on PostgreSQL. The same
rounds with SIGTERM instead, as a service manager stops the server: it must finish what it was answering and exit
with status 0, without a crash report.
"""
import collections
import json
import random
import socket
import threading
import time
import unittest
import uuid

from durability_support import POSTGRES_URL, Database, Server, iso, listed, request, submission

CLIENTS = 32
ROUNDS = 3


class Client(threading.Thread):
    """One participant's phone: a submission, then an appointment pushed through /sync, again and again."""

    def __init__(self, port, token, prompts, stop):
        super().__init__(daemon=True)
        self.port, self.token, self.prompts, self.stop = port, token, prompts, stop
        self.acknowledged_responses = []
        self.acknowledged_appointments = []
        self.server_errors = []

    def run(self):
        while not self.stop.is_set() and self.prompts:
            prompt, version = self.prompts.pop()
            body = submission(prompt, version)
            if not self.send("POST", "/api/v1/me/responses", body, lambda status, _: status in (200, 201)):
                return
            self.acknowledged_responses.append(body["id"])
            mutation = {"id": str(uuid.uuid4()), "type": "appointment.create", "appointment": {
                "title": "Session", "startsAt": iso(86_400), "endsAt": iso(90_000)}}
            applied = self.send(
                "POST", "/api/v1/sync", {"mutations": [mutation]},
                lambda status, answer: status == 200 and answer["results"][0]["status"] == "applied")
            if not applied:
                return
            self.acknowledged_appointments.append(mutation["id"])

    def send(self, method, path, body, acknowledged):
        try:
            status, answer = request(self.port, method, path, body, token=self.token, timeout=10)
        except OSError:
            return False  # the server is gone; what was in flight was never acknowledged
        if status >= 500:
            self.server_errors.append((path, status, answer))
        return acknowledged(status, answer)


def abandon(port, token, prompt, version):
    """Sends a submission and hangs up without waiting for the answer, as a phone losing its signal does."""
    body = json.dumps(submission(prompt, version)).encode()
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(
            b"POST /api/v1/me/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)


class KillTest(unittest.TestCase):
    def rounds(self, kind, terminate=False):
        database = Database(kind)
        self.addCleanup(database.drop)
        people = database.fixtures(CLIENTS, 150)
        acknowledged = {token: ([], []) for token, _ in people}
        for round in range(ROUNDS):
            server = Server(database, PLANNER_INTERVAL="0", DISPATCH_INTERVAL="0")
            stop = threading.Event()
            clients = [Client(server.port, token, prompts, stop) for token, prompts in people]
            for client in clients:
                client.start()
            time.sleep(random.uniform(0.5, 3.0))
            # Under load a fresh server may take longer to answer the first request: kill it only once something was
            # acknowledged, so each round tests what matters.
            deadline = time.time() + 20
            while not any(client.acknowledged_responses for client in clients) and time.time() < deadline:
                time.sleep(0.05)
            if terminate:
                status = server.terminate()
                self.assertEqual(status, 0, f"round {round}: the stopped server exited with {status}: {server.log_text()}")
                with open(server.log.name) as log:
                    self.assertNotIn("Backtracing", log.read(), f"round {round}: the server crashed while stopping")
            else:
                server.kill()
            stop.set()
            for client in clients:
                client.join(timeout=30)
                self.assertEqual(client.server_errors, [], f"round {round}: answers of 5xx")
                responses, appointments = acknowledged[client.token]
                responses += client.acknowledged_responses
                appointments += client.acknowledged_appointments
            self.assertGreater(sum(len(client.acknowledged_responses) for client in clients), 0, "nothing was acknowledged")

            server = Server(database, PLANNER_INTERVAL="0", DISPATCH_INTERVAL="0")
            try:
                for token, (responses, appointments) in acknowledged.items():
                    stored = listed(server.port, "/api/v1/me/responses", token)
                    counts = collections.Counter(response["id"] for response in stored)
                    for identifier in responses:
                        self.assertEqual(counts[identifier], 1, f"round {round}: response {identifier}")
                    per_prompt = collections.Counter(response["promptId"] for response in stored)
                    self.assertEqual(max(per_prompt.values(), default=1), 1, "a prompt was answered twice")
                    stored = listed(server.port, "/api/v1/me/appointments", token)
                    counts = collections.Counter(appointment["id"] for appointment in stored)
                    for identifier in appointments:
                        self.assertEqual(counts[identifier], 1, f"round {round}: appointment {identifier}")
                self.assertEqual(database.integrity_problems(), [])
            finally:
                server.stop()

    def test_sqlite(self):
        self.rounds("sqlite")

    def test_stop_after_clients_hung_up(self):
        """Requests whose clients hung up are still being answered when the server is asked to stop: it finishes
        them before it closes the database, and exits with 0."""
        database = Database("sqlite")
        self.addCleanup(database.drop)
        people = database.fixtures(16, 40)
        server = Server(database, PLANNER_INTERVAL="0", DISPATCH_INTERVAL="0")
        for token, prompts in people:
            for prompt, version in prompts:
                abandon(server.port, token, prompt, version)
        status = server.terminate()
        self.assertEqual(status, 0, server.log_text())
        self.assertNotIn("Backtracing", server.log_text())
        self.assertEqual(database.integrity_problems(), [])

    @unittest.skipUnless(POSTGRES_URL, "DURABILITY_DATABASE_URL names no PostgreSQL server")
    def test_postgres(self):
        self.rounds("postgres")

    def test_sqlite_stop(self):
        self.rounds("sqlite", terminate=True)

    @unittest.skipUnless(POSTGRES_URL, "DURABILITY_DATABASE_URL names no PostgreSQL server")
    def test_postgres_stop(self):
        self.rounds("postgres", terminate=True)


if __name__ == "__main__":
    unittest.main()
