"""Long-running services on a local node, supervised across engine restarts.

A config may start a service (a web server, a worker) that must outlive the
deploy step that started it and die with the node. The supervisor starts
each service in its own session, writes its output to a log in the node's
state directory, and records ``pid``, process group and the kernel's start
time of the process in a JSON file there. The record is the truth: an engine
restarted after ``kill -9`` reads it and can still stop what an earlier
engine started.

Why the start time: pids are reused. Before signalling, the supervisor
checks that the recorded pid is still the process it started (same start
time in ``/proc``); a process group id cannot be reused while any member of
the group is alive, so signalling the group is safe while it has members.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

from convection.software.errors import SandboxError
from convection.software.transports._procfs import group_alive, start_time, stat_fields

_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_POLL: Final = 0.05


@dataclass(frozen=True, slots=True)
class ServiceInfo:
    """A supervised service as recorded (``running`` is checked live)."""

    name: str
    pid: int
    running: bool
    log_path: str


#: ``(argv, env) -> Popen`` keyword arguments for the node (cwd, user, env).
SpawnOptions = Callable[[Mapping[str, str]], dict[str, Any]]


class Supervisor:
    """Starts, lists and stops the services of one node."""

    def __init__(self, node: str, state_dir: Path, spawn_options: SpawnOptions) -> None:
        self._node = node
        self._dir = state_dir
        self._spawn_options = spawn_options
        # Our own children, kept so their exit status is reaped (no zombies).
        self._children: dict[str, subprocess.Popen[bytes]] = {}

    def check_name(self, name: str) -> str:
        if not _NAME.match(name):
            raise SandboxError(self._node, f"invalid service name {name!r}")
        return name

    async def start(
        self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None
    ) -> ServiceInfo:
        """Start ``argv`` as service ``name``; a running one of that name is
        stopped first (a changed config re-declares its services)."""
        self.check_name(name)
        if not argv or not all(isinstance(a, str) for a in argv):
            raise SandboxError(self._node, f"service {name}: argv must be a non-empty string list")
        await self.stop(name)
        self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        log_path = self._dir / f"{name}.log"
        with open(log_path, "ab") as log:
            try:
                # The spawn options are keyword arguments typed Any, which
                # makes mypy pick Popen's text overload; the output is bytes.
                proc = cast(
                    "subprocess.Popen[bytes]",
                    subprocess.Popen(
                        list(argv),
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        close_fds=True,
                        **self._spawn_options(env or {}),
                    ),
                )
            except OSError as exc:
                raise SandboxError(
                    self._node, f"service {name} could not start: {exc.strerror or exc}"
                ) from None
        self._children[name] = proc
        record = {
            "name": name,
            "pid": proc.pid,
            "pgid": proc.pid,
            "starttime": start_time(proc.pid),
            "started_at": time.time(),
        }
        _write_private(self._dir / f"{name}.json", json.dumps(record).encode())
        return ServiceInfo(name, proc.pid, True, str(log_path))

    def services(self) -> list[ServiceInfo]:
        """Every recorded service, with whether it is still running."""
        self.reap()
        found = []
        for path in sorted(self._dir.glob("*.json")):
            record = _read_record(path)
            if record is not None:
                self._reap(record["name"])
                found.append(
                    ServiceInfo(
                        record["name"],
                        record["pid"],
                        group_alive(record["pgid"]) and _is_ours(record),
                        str(path.with_suffix(".log")),
                    )
                )
        return found

    async def stop(self, name: str, grace: float = 2.0) -> bool:
        """Stop a service and forget it. ``False`` when it was not recorded."""
        path = self._dir / f"{self.check_name(name)}.json"
        record = _read_record(path)
        if record is None:
            return False
        if _is_ours(record):
            await self._stop_group(name, record["pgid"], grace)
        path.unlink(missing_ok=True)
        child = self._children.pop(name, None)
        if child is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=1.0)  # a zombie by now: reaped at once
        return True

    async def stop_all(self, grace: float = 2.0) -> list[str]:
        """Stop every recorded service, concurrently; returns their names."""
        names = [p.stem for p in sorted(self._dir.glob("*.json"))]
        await asyncio.gather(*(self.stop(n, grace) for n in names))
        return names

    async def _stop_group(self, name: str, pgid: int, grace: float) -> None:
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                self._reap(name)
                if not group_alive(pgid):
                    return
                await asyncio.sleep(_POLL)

    def _reap(self, name: str) -> None:
        child = self._children.get(name)
        if child is not None:
            child.poll()

    def reap(self) -> None:
        """Collect the exit status of our children that have ended (no zombies),
        including services another engine instance stopped."""
        for name, child in list(self._children.items()):
            if child.poll() is not None:
                del self._children[name]


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return None
    record.setdefault("pgid", record["pid"])
    record.setdefault("name", path.stem)
    return record


def _is_ours(record: Mapping[str, Any]) -> bool:
    """True unless the recorded pid now belongs to a different process."""
    fields = stat_fields(record["pid"])
    if fields is None or fields[0] == "Z":
        return True  # the leader is gone; group members (if any) are still ours
    return record.get("starttime") in (None, int(fields[19]))
