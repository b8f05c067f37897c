"""Servers started and killed by the durability tests, on SQLite or on PostgreSQL, and the API calls they load
them with. Needs INTERLUDE_BIN; DURABILITY_DATABASE_URL names a PostgreSQL server for the PostgreSQL runs."""
import base64
import datetime
import glob
import http.client
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid

BIN = os.environ["INTERLUDE_BIN"]
POSTGRES_URL = os.environ.get("DURABILITY_DATABASE_URL")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def iso(seconds_from_now=0):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds_from_now)
    return moment.replace(microsecond=0).isoformat()


def push_key():
    """A web push (VAPID) private key: a P-256 scalar below the curve's order, as a first byte under 0x80 makes sure."""
    scalar = bytes([1 + os.urandom(1)[0] % 0x7f]) + os.urandom(31)
    return base64.urlsafe_b64encode(scalar).decode().rstrip("=")


class Database:
    """Where the servers keep their data: a fresh SQLite directory, or a fresh schema on the PostgreSQL server."""

    def __init__(self, kind):
        self.kind = kind
        self.directory = tempfile.mkdtemp(prefix=f"interlude-durability-{kind}-")
        self.schema = f"durability_{uuid.uuid4().hex[:12]}"
        # What every machine of one installation shares besides the database.
        self.key = base64.b64encode(os.urandom(32)).decode()
        self.push_key = push_key()
        self.machines = []

    def machine(self):
        """A data directory of its own, as another machine has."""
        directory = tempfile.mkdtemp(prefix=f"interlude-machine-{self.kind}-")
        self.machines.append(directory)
        return directory

    def environment(self, directory=None, **extra):
        environment = dict(
            os.environ, INTERLUDE_DATA_DIR=directory or self.directory, INTERLUDE_DATA_KEY=self.key,
            WEBPUSH_VAPID_PRIVATE_KEY=self.push_key, LOG_LEVEL="warning")
        environment.update(extra)
        if self.kind == "postgres":
            environment["DATABASE_URL"] = POSTGRES_URL
            environment["DATABASE_SCHEMA"] = self.schema
        else:
            environment.pop("DATABASE_URL", None)
        return environment

    def fixtures(self, participants, prompts):
        """Participants with open PSS-10 prompts; answers [(token, [(prompt id, instrument version)])]."""
        requests = os.path.join(self.directory, "requests.txt")
        subprocess.run(
            [BIN, "benchmark", "submission-fixtures", "--participants", str(participants), "--prompts", str(prompts),
             "--requests", requests],
            env=self.environment(), check=True, capture_output=True)
        people = {}
        with open(requests) as lines:
            for line in lines:
                token, prompt, version = line.split()
                people.setdefault(token, []).append((prompt, int(version)))
        return list(people.items())

    def psql(self, sql):
        client = shutil.which("psql") or sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
        return subprocess.run(
            [client, POSTGRES_URL, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
            check=True, capture_output=True, text=True).stdout

    def integrity_problems(self):
        """What the database's own check finds wrong; empty when it passes."""
        if self.kind == "postgres":
            self.psql("CREATE EXTENSION IF NOT EXISTS amcheck")
            # Every B-tree index of the schema against its table, heap included.
            self.psql(
                "SELECT bt_index_check(c.oid, true) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam "
                f"WHERE n.nspname = '{self.schema}' AND a.amname = 'btree'")
            return []
        path = os.path.join(self.directory, "interlude.sqlite")
        check = subprocess.run(
            ["sqlite3", path, "PRAGMA integrity_check; PRAGMA foreign_key_check;"],
            check=True, capture_output=True, text=True).stdout.split()
        return [] if check == ["ok"] else check

    def drop(self):
        if self.kind == "postgres":
            self.psql(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
        for directory in [self.directory] + self.machines:
            shutil.rmtree(directory, ignore_errors=True)


CRASH_MARKS = ("Fatal error:", "*** Signal", "*** Program crashed")


class Server:
    """One `interlude serve` (or `worker`) process on the database, with the database's data directory or one of its
    own (`directory`), as a process on another machine has."""

    def __init__(self, database, command="serve", directory=None, **settings):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.directory = directory or database.directory
        self.log = open(os.path.join(self.directory, f"{command}-{self.port}.log"), "w")
        self.process = subprocess.Popen(
            [BIN, command], stdout=self.log, stderr=subprocess.STDOUT,
            env=database.environment(self.directory, PORT=str(self.port), PUBLIC_URL=self.url, **settings))
        if command == "serve":
            self.wait_until_ready()

    def wait_until_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server stopped with {self.process.returncode}: {self.log_text()}")
            try:
                status, _ = request(self.port, "GET", "/ready")
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError("the server did not become ready")

    def kill(self):
        self.process.kill()
        self.process.wait()
        self.log.close()

    def terminate(self, timeout=60):
        """Asks the server to stop (SIGTERM), as a service manager does; answers its exit status."""
        self.process.terminate()
        status = self.process.wait(timeout=timeout)
        self.log.close()
        return status

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def log_text(self):
        """The server's log for a failure's message: from the beginning of a crash report when there is one (its reason
        and the crashed thread come first), otherwise its end."""
        if not self.log.closed:
            self.log.flush()
        with open(self.log.name) as file:
            text = file.read()
        starts = [found for found in (text.find(mark) for mark in CRASH_MARKS) if found >= 0]
        return text[min(starts):][:8000] if starts else text[-4000:]


def request(port, method, path, body=None, token=None, timeout=30):
    """One HTTP request on a connection of its own; answers (status, decoded JSON or None)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        text = response.read()
        try:
            return response.status, json.loads(text) if text else None
        except ValueError:
            return response.status, None
    finally:
        connection.close()


def listed(port, path, token):
    """Every item of a paged list."""
    items, cursor = [], None
    while True:
        query = "?limit=200" + (f"&cursor={cursor}" if cursor else "")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", path + query, headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        assert response.status == 200, f"GET {path} answered {response.status}"
        items += json.loads(response.read())
        cursor = response.getheader("Next-Cursor")
        connection.close()
        if not cursor:
            return items


def submission(prompt, version):
    """A PSS-10 response to the prompt, with an id of its own."""
    return {
        "id": str(uuid.uuid4()), "promptId": prompt, "instrumentKey": "pss-10", "version": version,
        "answers": {f"pss_{item}": str(item % 5) for item in range(1, 11)}, "startedAt": iso(-60), "completedAt": iso(),
    }
