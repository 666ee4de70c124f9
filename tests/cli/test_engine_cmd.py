"""``convection engine`` and Ctrl-C: work recorded by one process is done
by another, and an interrupted ``--wait`` leaves a resumable operation.

These run the installed console script as real processes sharing one
SQLite file, and send them real signals.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from convection.cli.main import run

EXE = Path(sys.executable).with_name("convection")

SLOW = """\
heat_template_version: 2021-04-16
parameters:
  secs: {type: number, default: 2}
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {value: slow, wait_secs: {get_param: secs}}
  fast:
    type: OS::Heat::TestResource
    properties: {value: fast}
outputs:
  slow: {value: {get_attr: [slow, output]}}
"""


@pytest.fixture
def slow(tmp_path: Path) -> str:
    path = tmp_path / "slow.yaml"
    path.write_text(SLOW)
    return str(path)


def convection(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(EXE), "--db", db, *args], capture_output=True, text=True, check=False, timeout=60
    )
    assert "Traceback" not in done.stderr
    return done


def status(capsys: pytest.CaptureFixture[str], db: str, stack: str) -> str:
    capsys.readouterr()
    assert run(["--db", db, "stack", "show", stack, "-f", "json"]) == 0
    return str(json.loads(capsys.readouterr().out)["stack_status"])


class Lines:
    """A process's stdout lines, read on a thread so a test can wait for one."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        assert process.stdout is not None
        stream = process.stdout
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Iterable[str]) -> None:
        for line in stream:
            self._queue.put(line)

    def expect(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.seen):
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r} in {self.seen}"
            try:
                self.seen.append(self._queue.get(timeout=left))
            except queue.Empty:
                continue


def test_engine_until_idle_does_work_another_process_recorded(
    db: str, slow: str, capsys: pytest.CaptureFixture[str]
) -> None:
    started = convection(db, "stack", "create", "-t", slow, "--parameter", "secs=0", "s")
    assert started.returncode == 0, started.stderr
    assert "CREATE_IN_PROGRESS" in started.stdout
    assert status(capsys, db, "s") == "CREATE_IN_PROGRESS"  # nobody ran the engine yet
    engine = convection(db, "engine", "--until-idle")
    assert engine.returncode == 0, engine.stderr
    assert "[default/s]: CREATE_COMPLETE" in engine.stdout
    assert "0 operation(s) left in progress" in engine.stdout
    assert status(capsys, db, "s") == "CREATE_COMPLETE"


def test_ctrl_c_leaves_a_resumable_operation(
    db: str, slow: str, capsys: pytest.CaptureFixture[str]
) -> None:
    process = subprocess.Popen(
        [
            str(EXE),
            "--db",
            db,
            "stack",
            "create",
            "-t",
            slow,
            "--parameter",
            "secs=2",
            "s",
            "--wait",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = Lines(process)
    lines.expect("[slow]: CREATE_IN_PROGRESS")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 130
    assert process.stderr is not None
    hint = process.stderr.read()
    assert "Traceback" not in hint
    assert f"convection --db {db} engine --until-idle" in hint
    assert f"convection --db {db} stack wait s" in hint
    assert status(capsys, db, "s") == "CREATE_IN_PROGRESS"

    assert run(["--db", db, "engine", "--until-idle"]) == 0
    assert status(capsys, db, "s") == "CREATE_COMPLETE"
    assert run(["--db", db, "stack", "output", "show", "s", "slow", "-f", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["output_value"] == "slow"


def test_engine_runs_until_sigterm(db: str, slow: str, capsys: pytest.CaptureFixture[str]) -> None:
    process = subprocess.Popen(
        [str(EXE), "--db", db, "engine"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = Lines(process)
        lines.expect("Ctrl-C or SIGTERM to stop")
        assert run(["--db", db, "stack", "create", "-t", slow, "--parameter", "secs=0", "s"]) == 0
        lines.expect("[default/s]: CREATE_COMPLETE")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        lines.expect("Engine stopped")
    finally:
        if process.poll() is None:
            process.kill()
    assert status(capsys, db, "s") == "CREATE_COMPLETE"


def test_engine_with_nothing_to_do(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--db", db, "engine", "--until-idle", "--concurrency", "4"]) == 0
    out = capsys.readouterr().out
    assert "Engine engine-" in out and "Engine idle" in out
    assert "4 jobs at once" in out


def test_the_concurrency_option_wins_with_the_store_from_the_environment(db: str) -> None:
    """With CONVECTION_DB the settings are read before the command runs; the
    option was once applied to them too late, and ignored."""
    env = {**os.environ, "CONVECTION_DB": db}
    done = subprocess.run(
        [str(EXE), "engine", "--until-idle", "--concurrency", "3"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "3 jobs at once" in done.stdout
    assert run(["--db", db, "engine", "--concurrency", "0"]) == 1
