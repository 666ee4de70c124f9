"""examples/wait-condition end to end, as a user runs it: real processes.

``convection stack create`` records the stack; ``convection engine`` runs in
its own process; machines report with ``signal.sh``. The first report is
sent while no engine runs (it is stored and acted on by the next engine),
the second while the restarted engine waits. The test reads the store
in-process (a read-only look, so a loaded machine's slow CLI start-ups are
spent only on what a user does).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from convection.service.stacks import Stacks
from convection.store.sql import SQLStore

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "wait-condition"
EXE = Path(sys.executable).with_name("convection")


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    """Several CLI processes start here; the shared 30 s deadline is too
    tight on a loaded machine, so this module's tests get four minutes."""
    previous = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, 240, 1)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def _expired(signum: int, frame: object) -> None:
    raise TimeoutError("test still running after 240 s")


@pytest.fixture
def reads(db: str) -> Iterator[Stacks]:
    store = SQLStore(db)
    yield Stacks(store)
    store.close()


@pytest.fixture
def environ(db: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    env["CONVECTION_DB"] = db
    env["PATH"] = f"{EXE.parent}{os.pathsep}{env.get('PATH', '')}"  # as installed
    return env


def convection(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), *args], env=environ, capture_output=True, text=True, timeout=60, check=False
    )


def show_json(environ: dict[str, str], *args: str) -> Any:
    done = convection(environ, *args, "-f", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def engine(environ: dict[str, str]) -> Iterator[Callable[[], subprocess.Popen[str]]]:
    """Start ``convection engine`` processes; each is stopped (SIGTERM) after."""
    started: list[subprocess.Popen[str]] = []

    def start() -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [str(EXE), "engine"],
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0


def until(predicate: Callable[[], bool], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def status(reads: Stacks, resource: str | None = None) -> str:
    if resource is None:
        return str(reads.show("default", "wait-demo")["stack_status"])
    return str(reads.resource("default", "wait-demo", resource)["resource_status"])


def attribute(reads: Stacks, resource: str, name: str) -> Any:
    return reads.resource("default", "wait-demo", resource)["attributes"][name]


def report(environ: dict[str, str], command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(EXAMPLE / "signal.sh"), *args],
        env={**environ, "SIGNAL_COMMAND": command},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_machines_report_through_signal_sh(
    environ: dict[str, str], engine: Callable[[], subprocess.Popen[str]], reads: Stacks
) -> None:
    template = str(EXAMPLE / "template.yaml")
    created = convection(environ, "stack", "create", "-t", template, "wait-demo")
    assert created.returncode == 0, created.stderr

    first = engine()
    until(lambda: status(reads, "machines_up") == "CREATE_IN_PROGRESS")
    stop(first)  # no engine runs now

    command = attribute(reads, "handle", "curl_cli")
    assert command in attribute(reads, "boot_script", "value")  # a machine's user data

    sent = report(environ, command, "SUCCESS", "web-1 is up", "10.0.0.11")
    assert sent.returncode == 0, sent.stderr
    assert status(reads, "machines_up") == "CREATE_IN_PROGRESS"  # 1 of 2, kept

    second = engine()
    sent = report(environ, command, "SUCCESS", 'web-2 "is" up', "10.0.0.12")
    assert sent.returncode == 0, sent.stderr
    until(lambda: status(reads) == "CREATE_COMPLETE")
    stop(second)

    reports = show_json(environ, "stack", "output", "show", "wait-demo", "reports")
    assert json.loads(reports["output_value"]) == {"1": "10.0.0.11", "2": "10.0.0.12"}
    events = reads.events("default", "wait-demo", resource_name="handle")
    reasons = [e["resource_status_reason"] for e in events]
    assert 'Signal: status:SUCCESS reason:web-2 "is" up' in reasons


def test_a_failure_report_fails_the_stack(
    environ: dict[str, str], engine: Callable[[], subprocess.Popen[str]], reads: Stacks
) -> None:
    template = str(EXAMPLE / "template.yaml")
    assert convection(environ, "stack", "create", "-t", template, "wait-demo").returncode == 0
    proc = engine()
    until(lambda: status(reads, "machines_up") == "CREATE_IN_PROGRESS")
    command = attribute(reads, "handle", "curl_cli")
    sent = report(environ, command, "FAILURE", "disk full")
    assert sent.returncode == 0, sent.stderr
    until(lambda: status(reads) == "CREATE_FAILED")
    stop(proc)
    shown = reads.resource("default", "wait-demo", "machines_up")
    assert shown["resource_status_reason"] == (
        "WaitConditionFailure: resources.machines_up: disk full"
    )
    bad = report(environ, command, "MAYBE")
    assert bad.returncode == 1
    assert "'MAYBE' is not one of SUCCESS, FAILURE" in bad.stderr
    assert "Traceback" not in bad.stderr
