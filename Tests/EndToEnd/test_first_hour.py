"""The first hour with the binary: `--version`, a start from another folder that finds its resources, a start-up
screen without the migration log, and one clear line (and a failing exit code) when the resources cannot be found.

Started by scripts/test with INTERLUDE_BIN set; each server here gets its own data folder and port.
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

BIN = os.environ["INTERLUDE_BIN"]
PACKAGE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class FirstHourTest(unittest.TestCase):
    def serve(self, binary, cwd, extra=None):
        """Starts `serve` in `cwd`; answers the process, its port and the file its output goes to."""
        data = tempfile.mkdtemp(prefix="interlude-first-hour-")
        self.addCleanup(shutil.rmtree, data, ignore_errors=True)
        port = free_port()
        environment = {
            "PATH": os.environ.get("PATH", ""), "INTERLUDE_DATA_DIR": data, "PORT": str(port),
            "PUBLIC_URL": f"http://127.0.0.1:{port}",
        }
        environment.update(extra or {})
        output = open(os.path.join(data, "output.txt"), "w+", encoding="utf-8")
        self.addCleanup(output.close)
        process = subprocess.Popen([binary, "serve"], cwd=cwd, env=environment, stdout=output, stderr=subprocess.STDOUT)
        self.addCleanup(self.stop, process)
        return process, port, output

    @staticmethod
    def stop(process):
        process.kill()
        process.wait(timeout=30)

    def ready(self, process, port, output):
        for _ in range(300):
            if process.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=2) as response:
                    if response.status == 200:
                        output.seek(0)
                        return output.read()
            except OSError:
                time.sleep(0.2)
        output.seek(0)
        self.fail(f"the server did not start:\n{output.read()}")

    def test_version(self):
        run = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0)
        self.assertRegex(run.stdout.strip(), r"^interlude \d+\.\d+\.\d+$")

    def test_started_from_another_folder_it_finds_its_resources_and_says_where_things_are(self):
        elsewhere = tempfile.mkdtemp(prefix="interlude-cwd-")
        self.addCleanup(shutil.rmtree, elsewhere, ignore_errors=True)
        process, port, output = self.serve(BIN, elsewhere)
        text = self.ready(process, port, output)
        self.assertIn("database ready, ", text)
        self.assertRegex(text, r"\d+ migrations applied")
        self.assertNotIn("[Migrator]", text)
        for label in ("| Console ", "| Patient app ", "| Database ", "| Mail ", "| Admin "):
            self.assertIn(label, text)
        self.assertIn(f"http://127.0.0.1:{port}/console", text)
        # Output that is no terminal keeps the one-time password out: it is in the file only.
        self.assertIn("first-admin.txt", text)
        self.assertNotIn("One-time password", text)

    def test_without_its_resources_it_says_so_in_one_line_and_fails(self):
        lonely = tempfile.mkdtemp(prefix="interlude-lonely-")
        self.addCleanup(shutil.rmtree, lonely, ignore_errors=True)
        binary = shutil.copy(BIN, os.path.join(lonely, "interlude"))
        run = subprocess.run([binary, "serve"], cwd=lonely, capture_output=True, text=True, timeout=60,
                             env={"PATH": os.environ.get("PATH", ""), "INTERLUDE_DATA_DIR": os.path.join(lonely, "data")})
        self.assertNotEqual(run.returncode, 0)
        lines = run.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertIn("Resources/", lines[0])
        self.assertIn("INTERLUDE_RESOURCES", lines[0])
        self.assertFalse(os.path.exists(os.path.join(lonely, "data")), "nothing is created before the check")

        wrong = subprocess.run([binary, "serve"], cwd=lonely, capture_output=True, text=True, timeout=60,
                               env={"PATH": os.environ.get("PATH", ""), "INTERLUDE_RESOURCES": "/nonexistent"})
        self.assertNotEqual(wrong.returncode, 0)
        self.assertIn("INTERLUDE_RESOURCES is /nonexistent", wrong.stderr)

        process, port, output = self.serve(binary, lonely, {"INTERLUDE_RESOURCES": PACKAGE})
        self.ready(process, port, output)

    def doctor(self, data, extra, *arguments):
        environment = {"PATH": os.environ.get("PATH", ""), "INTERLUDE_DATA_DIR": data}
        environment.update(extra)
        return subprocess.run([BIN, "doctor", *arguments], cwd=PACKAGE, env=environment, capture_output=True, text=True, timeout=120)

    def test_doctor_passes_a_good_configuration_and_names_each_fault_of_a_broken_one(self):
        data = tempfile.mkdtemp(prefix="interlude-doctor-")
        self.addCleanup(shutil.rmtree, data, ignore_errors=True)
        smtp = os.environ["TEST_SMTP_DIRECTORY"]
        good = {
            "PUBLIC_URL": "https://interlude.clinic.example", "TRUST_PROXY": "1", "WEBPUSH_SUBJECT": "mailto:ops@clinic.example",
            "SMTP_URL": f"smtp://interlude:test-secret@127.0.0.1:{os.environ['TEST_SMTP_PORT']}",
            "SMTP_CA_FILE": os.path.join(smtp, "smtp-cert.pem"),
        }
        subprocess.run([BIN, "migrate"], cwd=PACKAGE, env={"PATH": os.environ.get("PATH", ""), "INTERLUDE_DATA_DIR": data},
                       check=True, capture_output=True, timeout=120)
        run = self.doctor(data, good, "--mail-test", "doctor-check@clinic.example")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertNotIn("FIX", run.stdout)
        for subject in ("Public address", "Data folder", "Data key", "Mail", "Test message", "Web Push key", "Database", "Clock", "Disk"):
            self.assertRegex(run.stdout, rf"ok +{subject}:")
        delivered = []
        for name in os.listdir(smtp):
            if name.endswith(".eml"):
                with open(os.path.join(smtp, name), encoding="utf-8", errors="replace") as handle:
                    if "doctor-check@clinic.example" in handle.read():
                        delivered.append(name)
        self.assertEqual(len(delivered), 1)

        os.chmod(os.path.join(data, "data.key"), 0o644)
        broken = dict(good, PUBLIC_URL="http://interlude.clinic.example",
                      SMTP_URL=f"smtp://interlude:wrong-secret@127.0.0.1:{os.environ['TEST_SMTP_PORT']}")
        run = self.doctor(data, broken)
        self.assertNotEqual(run.returncode, 0)
        self.assertRegex(run.stdout, r"FIX +Public address: http://interlude\.clinic\.example")
        self.assertRegex(run.stdout, r"FIX +Data key: .*chmod 600")
        self.assertRegex(run.stdout, r"FIX +Mail: ")
        self.assertEqual((run.stdout + run.stderr).count("3 to fix"), 1, "the verdict is said once")


if __name__ == "__main__":
    unittest.main()
