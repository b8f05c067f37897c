"""Kill -9 loses nothing acknowledged.

32 clients submit questionnaires and push appointments through /sync as fast as the server answers; each keeps
the ids the server acknowledged. At a random moment the server is killed with SIGKILL, started again on the same
database, and every acknowledged id must be there exactly once, and the database must pass its own integrity
check. Several rounds on the same database, on SQLite and (with DURABILITY_DATABASE_URL) on PostgreSQL.
"""
import collections
import random
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


class KillTest(unittest.TestCase):
    def rounds(self, kind):
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

    @unittest.skipUnless(POSTGRES_URL, "DURABILITY_DATABASE_URL names no PostgreSQL server")
    def test_postgres(self):
        self.rounds("postgres")


if __name__ == "__main__":
    unittest.main()
