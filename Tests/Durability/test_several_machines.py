"""Several machines, one installation: two servers and a worker on one PostgreSQL, each with a data directory of its
own and the same data key, as on three machines without a shared disk.

An export asked for on server A is written by the worker and downloads from A and from B with the same bytes; a
person's own copy asked for on A downloads from B; an upload's parts alternate between A and B and are read by the
worker. Then the worker is killed with SIGKILL in the middle of an export and of an import, and a second worker
finishes both once their leases run out. A machine started with a data key or a web push key of its own is refused.
"""
import base64
import hashlib
import http.client
import io
import json
import os
import re
import subprocess
import time
import unittest
import uuid
import zipfile

from durability_support import BIN, POSTGRES_URL, Database, Server, free_port, push_key, request

LEASE = 120


def send(port, method, path, body=b"", token=None, headers=None):
    """A request with a body of bytes; answers (status, headers, body bytes)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        sent = dict(headers or {})
        if token:
            sent["Authorization"] = f"Bearer {token}"
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def steps_csv(before, count):
    """`count` step counts a second apart, the newest a second before `before` (seconds since 1970)."""
    rows = ["type,value,unit,start,end"]
    for index in range(count):
        moment = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(before - (index + 1)))
        rows.append(f"stepCount,{index % 90 + 10},count,{moment},{moment}")
    return ("\n".join(rows) + "\n").encode()


@unittest.skipUnless(POSTGRES_URL, "DURABILITY_DATABASE_URL names no PostgreSQL server")
class SeveralMachinesTest(unittest.TestCase):
    def setUp(self):
        self.database = Database("postgres")
        self.addCleanup(self.database.drop)
        demo = subprocess.run(
            [BIN, "demo", "--template", "anima"], env=self.database.environment(self.database.machine()),
            check=True, capture_output=True, text=True).stdout
        accounts = dict((role, (email, password)) for role, email, password in
                        re.findall(r"^(researcher|patient): (\S+@\S+) (\S+)$", demo, re.MULTILINE))
        jobs_off = {"EXPORT_INTERVAL": "0", "PLANNER_INTERVAL": "0", "DISPATCH_INTERVAL": "0"}
        self.a = self.start("serve", **jobs_off)
        self.b = self.start("serve", **jobs_off)
        self.worker = self.start("worker", EXPORT_INTERVAL="1")
        self.researcher = self.sign_in(self.a, *accounts["researcher"])
        self.patient = self.sign_in(self.b, *accounts["patient"])
        status, studies = request(self.a.port, "GET", "/api/v1/studies", token=self.researcher)
        self.assertEqual(status, 200)
        self.study = next(study["id"] for study in studies if study["title"] == "Anima")
        status, _ = request(self.a.port, "PUT", "/api/v1/me/sample-types/stepCount", {"enabled": True}, token=self.patient)
        self.assertEqual(status, 200)
        # A mood now keeps the study's window open up to now for the steps uploaded, which are all older.
        self.mood_at = int(time.time())
        status, _ = request(self.b.port, "POST", "/api/v1/me/moods", {
            "id": str(uuid.uuid4()), "valence": 0.6, "recordedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.mood_at))},
            token=self.patient)
        self.assertEqual(status, 201)

    def start(self, command, **settings):
        """A process on a machine of its own: its own data directory, the shared database and key."""
        server = Server(self.database, command, directory=self.database.machine(), **settings)
        self.addCleanup(server.stop)
        return server

    def sign_in(self, server, email, password):
        status, answer = request(server.port, "POST", "/api/v1/sessions", {"email": email, "password": password})
        self.assertEqual(status, 201, answer)
        return answer["token"]

    def wait_for(self, what, check, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            answer = check()
            if answer:
                return answer
            time.sleep(0.2)
        self.fail(f"{what} did not happen within {timeout} s")

    def export(self, server):
        status, export = request(server.port, "POST", f"/api/v1/studies/{self.study}/exports", token=self.researcher)
        self.assertEqual(status, 202, export)
        return export["id"]

    def export_status(self, server, export):
        return request(server.port, "GET", f"/api/v1/exports/{export}", token=self.researcher)[1]

    def download(self, server, export):
        status, headers, body = send(server.port, "GET", f"/api/v1/exports/{export}/file", token=self.researcher)
        self.assertEqual(status, 200, body[:200])
        self.assertEqual(int(headers["Content-Length"]), len(body))
        return body

    def upload(self, server, body, **headers):
        return send(server.port, "POST", "/api/v1/me/health-imports", body, self.patient,
                    {"Content-Type": "text/csv", **headers})

    def import_status(self, server, upload):
        return request(server.port, "GET", f"/api/v1/me/health-imports/{upload}", token=self.patient)[1]

    def test_files_reach_every_machine(self):
        # An export asked for on A, written by the worker, downloaded from B and from A: the same bytes.
        export = self.export(self.a)
        finished = self.wait_for("the export", lambda: (s := self.export_status(self.b, export))["status"] == "ready" and s, 120)
        from_b, from_a = self.download(self.b, export), self.download(self.a, export)
        self.assertEqual(hashlib.sha256(from_a).hexdigest(), hashlib.sha256(from_b).hexdigest())
        self.assertEqual(len(from_a), finished["size"])
        self.assertIn("samples.csv", zipfile.ZipFile(io.BytesIO(from_b)).namelist())

        # A person's own copy asked for on A, downloaded from B, once.
        status, _ = request(self.a.port, "POST", "/api/v1/me/export", token=self.patient)
        self.assertEqual(status, 202)
        self.wait_for("the copy", lambda: request(self.b.port, "GET", "/api/v1/me/export/status", token=self.patient)[1]["status"] == "ready", 120)
        status, headers, copy = send(self.b.port, "GET", "/api/v1/me/export", token=self.patient)
        self.assertEqual(status, 200, copy[:200])
        self.assertEqual(int(headers["Content-Length"]), len(copy))
        self.assertIn("index.html", zipfile.ZipFile(io.BytesIO(copy)).namelist())
        self.assertEqual(send(self.a.port, "GET", "/api/v1/me/export", token=self.patient)[0], 409, "a copy downloads once")

        # An upload whose parts alternate between A and B, read by the worker.
        body = steps_csv(self.mood_at, 3000)
        cuts = [0, len(body) // 3, 2 * len(body) // 3, len(body)]
        status, _, answer = self.upload(self.a, body[:cuts[1]], **{"Upload-Length": str(len(body))})
        self.assertEqual(status, 201, answer)
        upload = json.loads(answer)["id"]
        for server, (start, end) in zip((self.b, self.a), zip(cuts[1:], cuts[2:])):
            status, _, answer = send(server.port, "PATCH", f"/api/v1/me/health-imports/{upload}", body[start:end], self.patient,
                                     {"Content-Type": "application/octet-stream", "Upload-Offset": str(start)})
            self.assertEqual(status, 200, answer)
        done = self.wait_for("the import", lambda: (s := self.import_status(self.b, upload))["status"] in ("done", "failed") and s, 120)
        self.assertEqual((done["status"], done["stored"]), ("done", 3000), done)
        self.assertEqual(self.database.psql(
            f"SELECT COUNT(*) FROM {self.database.schema}.file_chunks WHERE file = 'health-import/{upload}'").strip(), "0",
            "the upload's chunks go once it is read")

    def test_a_machine_without_the_installations_keys_is_refused(self):
        other_key = base64.b64encode(os.urandom(32)).decode()
        for command, setting, named in (("serve", {"INTERLUDE_DATA_KEY": other_key}, "INTERLUDE_DATA_KEY"),
                                        ("worker", {"WEBPUSH_VAPID_PRIVATE_KEY": push_key()},
                                         "WEBPUSH_VAPID_PRIVATE_KEY")):
            environment = self.database.environment(self.database.machine(), PORT=str(free_port()), **setting)
            try:
                refused = subprocess.run([BIN, command], env=environment, capture_output=True, text=True, timeout=60)
            except subprocess.TimeoutExpired:
                self.fail(f"{command} with {named} of its own was not refused")
            self.assertNotEqual(refused.returncode, 0)
            self.assertIn(named, refused.stdout + refused.stderr)
        # The machines with the installation's keys still serve.
        self.assertEqual(request(self.b.port, "GET", "/api/v1/studies", token=self.researcher)[0], 200)

    def test_a_killed_worker_leaves_its_export_and_import_to_the_next(self):
        # Enough samples that the export and the import take a while.
        status, _, answer = self.upload(self.a, steps_csv(self.mood_at, 60_000))
        self.assertEqual(status, 201, answer)
        first = json.loads(answer)["id"]
        self.wait_for("the first import", lambda: self.import_status(self.a, first)["status"] == "done", 300)
        status, _, answer = self.upload(self.b, steps_csv(self.mood_at - 60_000, 60_000))
        self.assertEqual(status, 201, answer)
        upload = json.loads(answer)["id"]
        export = self.export(self.b)

        def both_under_way():
            reading = self.import_status(self.a, upload)
            running = self.export_status(self.a, export)
            return reading["status"] == "reading" and reading.get("read", 0) > 0 and running["status"] == "running"
        self.wait_for("the worker reading both", both_under_way, 120)
        self.worker.kill()
        second = self.start("worker", EXPORT_INTERVAL="1")
        self.addCleanup(second.stop)

        finished = self.wait_for("the export taken over",
                                 lambda: (s := self.export_status(self.b, export))["status"] in ("ready", "failed") and s, LEASE + 180)
        self.assertEqual(finished["status"], "ready", finished)
        samples = zipfile.ZipFile(io.BytesIO(self.download(self.a, export))).read("samples.csv").decode().count("\n")
        self.assertGreaterEqual(samples - 1, 60_000)
        done = self.wait_for("the import taken over",
                             lambda: (s := self.import_status(self.a, upload))["status"] in ("done", "failed") and s, LEASE + 180)
        # A batch stored but not yet counted when the worker died is counted again, as duplicates.
        self.assertEqual((done["status"], done["stored"] + done["duplicates"]), ("done", 60_000), done)


if __name__ == "__main__":
    unittest.main()
