"""The demo's dashboard: a ``convection server`` on the demo's store, left
running after ``make demo`` ends, with a token to sign in with.

It runs in a session of its own (so the demo's terminal closing does not
stop it) on a free loopback port, logs to the demo directory, and its pid
is kept there: the next demo run stops it before it wipes the store.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from convection.store import SQLStore
from convection.tokens import Role, Tokens

#: Seconds the server has to answer /healthz (migrations included).
START_SECONDS = 60


def pid_file(directory: Path) -> Path:
    return directory / "dashboard.pid"


def stop_previous(directory: Path) -> None:
    """Stop the dashboard server an earlier demo left running, if any."""
    path = pid_file(directory)
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return
    path.unlink(missing_ok=True)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):  # up to 10 s for a graceful stop
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def start(directory: Path, db: str, port: int, project: str) -> tuple[str, str] | None:
    """Start the server; its URL and a member token of ``project``, or
    None (with the reason printed) if it did not come up."""
    token = _token(db, project)
    command = Path(sys.executable).parent / "convection"
    argv = [str(command), "--db", db, "server", "--bind", f"127.0.0.1:{port}"]
    with (directory / "dashboard.log").open("ab") as log:
        process = subprocess.Popen(
            argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
        )
    pid_file(directory).write_text(str(process.pid))
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            print(f"the dashboard server exited; see {directory / 'dashboard.log'}")
            return None
        try:
            with urllib.request.urlopen(url + "healthz", timeout=2):
                return url, token
        except OSError:
            time.sleep(0.2)
    print(f"the dashboard server did not answer in {START_SECONDS} s; see its log")
    return None


def _token(db: str, project: str) -> str:
    store = SQLStore(db)
    try:
        issued = Tokens(store).issue(project, Role.MEMBER, description="make demo's dashboard")
    finally:
        store.close()
    return issued.secret
