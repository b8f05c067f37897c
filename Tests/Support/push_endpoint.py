"""A push service on loopback for the tests: keeps every message that arrives as (path, headers, body); paths under
/gone/ answer 410, as for a browser that unsubscribed."""
import http.server
import threading
import time


class PushEndpoint:
    def __init__(self):
        self.received = []
        lock = threading.Lock()
        endpoint = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with lock:
                    endpoint.received.append((self.path, dict(self.headers), body))
                self.send_response(410 if self.path.startswith("/gone/") else 201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, path, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for item in list(self.received):
                if item[0] == path:
                    return item
            time.sleep(0.2)
        raise AssertionError(f"nothing arrived at {path}")

    def stop(self):
        self.server.shutdown()
