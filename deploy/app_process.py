"""One app process of the class server: ``streamlit run app.py`` plus a liveness probe.

Usage (:mod:`deploy.class_server` starts it)::

    python -m deploy.app_process --port 8642 --probe-port 8643

Streamlit's own ``/_stcore/health`` is an async handler of the server's event loop: it tells
nothing about script runs (they run on their own threads), but under load it waits behind
everything else the loop does for thirty sessions (the issue #50 run: three 2-s checks in a
row failed on a CPU-starved process that was serving, and HAProxy answered 503). This module
runs the same Streamlit server in this process and, before it, a small HTTP server on
``--probe-port`` served by its **own thread**: it answers at once whatever the loop and the
scripts are doing, as long as the process runs. A stopped (SIGSTOP) or frozen process
answers nothing, so HAProxy's short check timeout takes it out within seconds; a busy one
answers in milliseconds.

What the probe says: ``ok`` (200) while Streamlit's own health route answered, however
slowly, within the last :data:`LOOP_SILENT_SECONDS` (a watcher thread asks it once a second
with that long a timeout); ``starting`` (503) before its first answer; ``event loop silent
for N s`` (503) after: a loop stuck for good is dead even if the process runs. Any path of
the probe port answers the same.
"""

from __future__ import annotations

import argparse
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOOP_SILENT_SECONDS = 120.0  # Streamlit's loop not answering this long: dead, not busy
ASK_EVERY = 1.0  # seconds between the watcher's questions to the loop


class Liveness:
    """What the probe answers: when Streamlit's own health route last answered."""

    def __init__(self) -> None:
        self.last_answer: float | None = None

    def verdict(self, now: float | None = None) -> tuple[int, str]:
        if self.last_answer is None:
            return 503, "starting"
        silent = (time.monotonic() if now is None else now) - self.last_answer
        if silent > LOOP_SILENT_SECONDS:
            return 503, f"event loop silent for {silent:.0f} s"
        return 200, "ok"

    def watch(self, url: str) -> None:
        """Ask ``url`` (Streamlit's ``/_stcore/health``) forever; note each answer."""
        while True:
            try:
                with urllib.request.urlopen(url, timeout=LOOP_SILENT_SECONDS) as answer:
                    if answer.read() == b"ok":
                        self.last_answer = time.monotonic()
            except OSError:
                pass
            time.sleep(ASK_EVERY)


def probe_server(port: int, liveness: Liveness, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """The probe's HTTP server on ``host:port`` (bound here; serve it on a thread)."""

    class Probe(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, text = liveness.verdict()
            body = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # one check a second: not worth a log line

    server = ThreadingHTTPServer((host, port), Probe)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="Streamlit's port")
    parser.add_argument("--probe-port", type=int, required=True, help="the liveness probe's")
    parser.add_argument("--address", default="127.0.0.1")
    args = parser.parse_args(argv)
    liveness = Liveness()
    probe = probe_server(args.probe_port, liveness, args.address)
    threading.Thread(target=probe.serve_forever, name="cape-probe", daemon=True).start()
    threading.Thread(
        target=liveness.watch,
        args=(f"http://{args.address}:{args.port}/_stcore/health",),
        name="cape-probe-watch",
        daemon=True,
    ).start()
    from streamlit.web.cli import main as streamlit

    streamlit(
        ["run", "app.py", "--server.port", str(args.port), "--server.address", args.address],
        prog_name="streamlit",
    )


if __name__ == "__main__":
    main()
