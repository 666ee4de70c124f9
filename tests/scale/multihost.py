"""Engines, workers and API servers as real processes, each on a host of its own.

A :class:`Fleet` starts ``python -m convection`` subprocesses, each inside a
:class:`~tests.scale.netns.Host` (a network namespace) or, for a ``None``
host, in the root namespace, every one on the store URL as seen from where
it runs. It can signal, kill and restart them by name, reads ``convection
status`` from the root namespace, and stops everything it started at the
end (a SIGSTOPped process is continued first, so SIGTERM reaches it).

The test process reads the store itself (``open_store`` on the root
namespace's URL), a fresh store per look so a restarted PostgreSQL costs a
failed look, not a broken pool.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convection.resources.testing import LEDGER_ENV, read_ledger
from convection.store import open_store

from .netns import Host

CLI = [sys.executable, "-m", "convection"]

UrlFor = Callable[[Host | None], str]


@dataclass
class Proc:
    """One started process: where it runs and how it was started (to restart it)."""

    name: str
    host: Host | None
    args: tuple[str, ...]
    env: dict[str, str]
    popen: subprocess.Popen[bytes]
    starts: int = 1
    stopped: bool = False

    @property
    def pid(self) -> int:
        return self.popen.pid


@dataclass
class Fleet:
    """Subprocesses on one store; ``url_for(host)`` is the store as ``host`` reaches it."""

    url_for: UrlFor
    home: Path
    lease: int = 3
    extra_env: Mapping[str, str] = field(default_factory=dict)
    procs: dict[str, Proc] = field(default_factory=dict)

    def env(self, host: Host | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
        return {
            **base,
            "CONVECTION_DB": self.url_for(host),
            "CONVECTION_CONFIG": str(self.home / "absent.toml"),
            "CONVECTION_ENGINE_LEASE_SECONDS": str(self.lease),
            "XDG_DATA_HOME": str(self.home),
            "HOME": str(self.home),
            **self.extra_env,
            **(extra or {}),
        }

    def log_path(self, name: str) -> Path:
        return self.home / f"{name}.log"

    def _spawn(
        self, name: str, host: Host | None, args: Sequence[str], env: dict[str, str]
    ) -> subprocess.Popen[bytes]:
        with self.log_path(name).open("ab") as log:
            if host is None:
                return subprocess.Popen(
                    [*CLI, *args], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
                )
            # ``ip netns exec`` execs the command: the pid is the convection process's.
            return host.spawn([*CLI, *args], env=env, stdout=log, stderr=log)

    def start(
        self, name: str, host: Host | None, *args: str, env: Mapping[str, str] | None = None
    ) -> Proc:
        full_env = self.env(host, env)
        proc = Proc(name, host, tuple(args), full_env, self._spawn(name, host, args, full_env))
        self.procs[name] = proc
        return proc

    def signal(self, name: str, sig: signal.Signals) -> None:
        proc = self.procs[name]
        proc.popen.send_signal(sig)
        proc.stopped = sig == signal.SIGSTOP or (proc.stopped and sig != signal.SIGCONT)

    def kill9(self, name: str) -> None:
        proc = self.procs[name]
        proc.popen.kill()
        proc.popen.wait(10)

    def restart(self, name: str) -> Proc:
        """Start ``name`` again as it was started (after it died or was killed)."""
        proc = self.procs[name]
        assert proc.popen.poll() is not None, f"{name} still runs"
        proc.popen = self._spawn(name, proc.host, proc.args, proc.env)
        proc.starts += 1
        proc.stopped = False
        return proc

    def cli(self, *args: str, timeout: float = 120, check: bool = True) -> str:
        """``convection ARGS`` in the root namespace; its stdout (asserting success)."""
        done = subprocess.run(
            [*CLI, *args], env=self.env(None), capture_output=True, text=True, timeout=timeout
        )
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def log(self, name: str) -> str:
        path = self.log_path(name)
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        """The tail of every log, for an assertion's message."""
        return "\n".join(f"--- {n} ---\n{self.log(n)[-3000:]}" for n in self.procs)

    def assert_alive(self, *names: str) -> None:
        for name in names or tuple(self.procs):
            code = self.procs[name].popen.poll()
            assert code is None, f"{name} exited {code}:\n{self.log(name)[-3000:]}"

    def stop(self) -> None:
        """SIGTERM (SIGCONT first to a stopped one), then SIGKILL after 10 s."""
        for proc in self.procs.values():
            if proc.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.popen.send_signal(signal.SIGCONT)
                    proc.popen.terminate()
        for proc in self.procs.values():
            try:
                proc.popen.wait(10)
            except subprocess.TimeoutExpired:
                proc.popen.kill()
                proc.popen.wait(10)

    # -- reading the store ----------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        """``convection status --format json``: every process row."""
        found: list[dict[str, Any]] = json.loads(self.cli("status", "--format", "json"))
        return found

    def row_of(self, name: str) -> dict[str, Any] | None:
        """The current status row of the process started as ``name`` (by pid)."""
        pid = self.procs[name].pid
        return next((r for r in self.status() if r["pid"] == pid), None)

    def look(self, read: Callable[[Any], Any]) -> Any:
        """``read(store)`` on a fresh store; None when the store cannot be read now."""
        try:
            store = open_store(self.url_for(None))
        except Exception:
            return None
        try:
            return read(store)
        except Exception:
            return None
        finally:
            with contextlib.suppress(Exception):
                store.close()

    def stack_status(self, stack: str) -> str | None:
        def read(store: Any) -> str:
            found = [s for s in store.list_stacks(None) if s.name == stack]
            return f"{found[0].action}_{found[0].status}" if found else "ABSENT"

        result: str | None = self.look(read)
        return result

    def resource_states(self, stack: str) -> dict[str, str] | None:
        def read(store: Any) -> dict[str, str]:
            found = next(s for s in store.list_stacks(None) if s.name == stack)
            return {
                r.name: f"{r.action}_{r.status}"
                for r in store.list_resources(found.id)
                if r.current
            }

        result: dict[str, str] | None = self.look(read)
        return result

    def nodes(self, stack: str) -> list[Any] | None:
        """The nodes of the stack's current traversal."""

        def read(store: Any) -> list[Any]:
            found = next(s for s in store.list_stacks(None) if s.name == stack)
            return list(store.list_nodes(found.traversal_id))

        result: list[Any] | None = self.look(read)
        return result


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60, every: float = 0.2) -> Any:
    """``check()``'s first truthy answer, polled; an AssertionError naming ``what``
    once ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


def wait_settled(fleet: Fleet, stack: str, timeout: float = 60) -> str:
    """The stack's status once it is no longer IN_PROGRESS (or absent)."""

    def ended() -> str | None:
        status = fleet.stack_status(stack)
        if status is None or status == "ABSENT" or status.endswith("IN_PROGRESS"):
            return None
        return status

    try:
        result: str = wait_for(ended, f"stack {stack} to settle", timeout, every=0.25)
    except AssertionError as err:
        raise AssertionError(f"{err}; now {fleet.stack_status(stack)}\n{fleet.logs()}") from None
    return result


def ledger_template(count: int, ledger: Path, *, hold: float = 0, prefix: str = "r") -> str:
    """``count`` independent ledger resources writing to ``ledger``."""
    props = f"path: '{ledger}'" + (f", hold_secs: {hold}" if hold else "")
    lines = ["heat_template_version: 2018-08-31", "resources:"]
    lines += [
        f"  {prefix}{i}: {{type: Convection::Test::Ledger, properties: {{{props}}}}}"
        for i in range(count)
    ]
    return "\n".join(lines) + "\n"


def duplicate_creates(ledger: Path) -> dict[str, int]:
    """Physical ids created more than once."""
    counts = Counter(name for event, name in read_ledger(ledger) if event == "create")
    return {name: n for name, n in counts.items() if n > 1}


def created(ledger: Path) -> set[str]:
    return {name for event, name in read_ledger(ledger) if event == "create"}


__all__ = [
    "LEDGER_ENV",
    "Fleet",
    "Proc",
    "created",
    "duplicate_creates",
    "ledger_template",
    "wait_for",
    "wait_settled",
]
