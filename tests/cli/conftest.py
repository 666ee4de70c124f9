"""Fixtures every CLI test shares: a clean environment, a private store, and
a deadline so an engine that cannot make progress fails a test instead of
hanging the suite."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

DEADLINE_SECONDS = 30


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No setting leaks in from the user's environment or config file."""
    for name in list(os.environ):
        if name.startswith("CONVECTION_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CONVECTION_CONFIG", str(tmp_path / "absent.toml"))


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    """The alarm interrupts the event loop, and repeats until it gets out."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"test still running after {DEADLINE_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, DEADLINE_SECONDS, 1)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'stacks.db'}"


#: ``convection --db DB ARGS`` in this process: exit code, stdout, stderr.
Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(db: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    from convection.cli.main import run

    def call(*args: str) -> tuple[int, str, str]:
        code = run(["--db", db, *args])
        out, err = capsys.readouterr()
        return code, out, err

    return call
