"""A node on this machine: a sandbox with its own tree, environment and user.

A ``Local::Node`` is a directory tree (its *root*) that Convection owns:

====================  ===================================================
``ROOT/work``         the footprint hooks use (heat-agents' /var/lib/heat-config)
``ROOT/home``         ``$HOME`` of every command
``ROOT/tmp``          ``$TMPDIR``
``ROOT/services``     ``$CONVECTION_SERVICE_DIR``: service requests from configs
``ROOT/state``        the engine's own records (service pids, logs); 0700
====================  ===================================================

Every command gets a clean, explicit environment (``PATH``, ``HOME``,
``TMPDIR``, ``LANG``/``LC_ALL``, ``USER``/``LOGNAME``, ``SHELL``, the node's
own ``env``) and never the engine's: nothing leaks from the engine to a
config. Every command starts its own session, so a timeout kills all it
started. When the engine runs as root, commands can run as another OS user
(``user=``): the sandbox is chowned to that user and processes drop to its
uid/gid with no supplementary groups. As another user, a non-root engine
cannot switch, and says so.

Files: every path the engine reads or writes must lie inside the root once
its directory is resolved, and the last step is opened with ``O_NOFOLLOW``:
a config running as the node's user cannot plant a symlink that makes the
engine (perhaps root) read or write anywhere else.

Services: a config asks for one by writing ``$CONVECTION_SERVICE_DIR/NAME.json``
(``{"argv": [...], "env": {...}}``); after a *successful* deploy step the node
starts it under supervision (:mod:`._supervisor`); a request of a failed step
waits for the next successful one. Services outlive the step and stop when
the node is deleted; the Python API (:meth:`LocalNode.start_service`) does
the same for plugins. Same name again means restart.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import pwd
import shutil
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from convection.software.errors import SandboxError
from convection.software.transports._process import RunAs, run_process
from convection.software.transports._supervisor import ServiceInfo, Supervisor
from convection.software.transports.base import (
    FILE_LIMIT,
    KILL_GRACE,
    OUTPUT_LIMIT,
    AnsibleTarget,
    FileBatch,
    RunResult,
    check_env,
)

DEFAULT_PATH: Final = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SERVICE_DIR_ENV: Final = "CONVECTION_SERVICE_DIR"
_REQUEST_LIMIT: Final = 64 * 1024


class LocalNode:
    """A sandboxed node on this machine; implements :class:`Transport`."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        name: str,
        user: str | None = None,
        env: Mapping[str, str] | None = None,
        path: str = DEFAULT_PATH,
        kill_grace: float = KILL_GRACE,
    ) -> None:
        self._name = name
        self.root = Path(os.path.abspath(root))
        self._run_as = _lookup_user(name, user)
        self._env = dict(env or {})
        check_env(self._env)
        self._path = path
        self._kill_grace = kill_grace
        self._prepared = False
        self.supervisor = Supervisor(name, self.root / "state" / "services", self._spawn_options)

    # -- layout ---------------------------------------------------------------

    @property
    def node_name(self) -> str:
        return self._name

    @property
    def user(self) -> str | None:
        return self._run_as.name if self._run_as else None

    async def workdir(self) -> str:
        if not self._prepared:
            await self.prepare()
        return str(self.root / "work")

    def _user_dirs(self) -> list[Path]:
        return [self.root / d for d in ("work", "home", "tmp", "services")]

    async def prepare(self) -> None:
        """Create the tree (idempotent). User-facing dirs belong to the node's user."""
        self.root.mkdir(mode=0o755, parents=True, exist_ok=True)
        (self.root / "state").mkdir(mode=0o700, exist_ok=True)
        for d in self._user_dirs():
            d.mkdir(mode=0o700, exist_ok=True)
            self._own(d)
        self._prepared = True

    def base_env(self) -> dict[str, str]:
        """The whole environment of a command on this node, before its own."""
        user = self._run_as.name if self._run_as else pwd.getpwuid(os.geteuid()).pw_name
        env = {
            "PATH": self._path,
            "HOME": str(self.root / "home"),
            "TMPDIR": str(self.root / "tmp"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "USER": user,
            "LOGNAME": user,
            "SHELL": "/bin/sh",
            "CONVECTION_NODE": self._name,
            SERVICE_DIR_ENV: str(self.root / "services"),
        }
        env.update(self._env)
        return env

    # -- Transport --------------------------------------------------------------

    async def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stdin: bytes | None = None,
        cwd: str | None = None,
        timeout: float | None = None,
        output_limit: int = OUTPUT_LIMIT,
        prepare: FileBatch | None = None,
    ) -> RunResult:
        if not self._prepared:
            await self.prepare()
        if prepare is not None:
            if prepare.read:
                raise ValueError("a run's prepare batch cannot read files")
            await self.apply(prepare)
        full = self.base_env()
        full.update(env or {})
        check_env(full)
        workdir = self._inside(cwd) if cwd else self.root / "work"
        return await run_process(
            argv,
            env=full,
            cwd=str(workdir),
            stdin=stdin,
            timeout=timeout,
            output_limit=output_limit,
            kill_grace=self._kill_grace,
            run_as=self._run_as,
        )

    async def apply(self, batch: FileBatch) -> dict[str, bytes | None]:
        """Local files cost no round trip: the batch is the single operations in order."""
        for directory in batch.make_dirs:
            await self.make_dirs(directory)
        found = {path: await self.get_file(path) for path in batch.read}
        if batch.only_if_absent and any(data is not None for data in found.values()):
            return found
        for path in batch.remove:
            await self.remove_tree(path)
        for write in batch.write:
            await self.put_file(write.path, write.data, mode=write.mode)
        return found

    async def put_file(self, path: str, data: bytes, *, mode: int = 0o600) -> None:
        target = self._inside(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        fd = self._open(target, flags, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), mode)
        self._own(target)

    async def get_file(self, path: str) -> bytes | None:
        target = self._inside(path)
        try:
            fd = self._open(target, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            data = f.read(FILE_LIMIT + 1)
        if len(data) > FILE_LIMIT:
            raise SandboxError(self._name, f"{path} is larger than {FILE_LIMIT} bytes")
        return data

    def _open(self, target: Path, flags: int, mode: int = 0o600) -> int:
        """Open without following a symlink at the last step: a config running
        as the node's user must not make the engine read or write elsewhere."""
        try:
            return os.open(target, flags, mode)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SandboxError(self._name, f"{target} is a symbolic link") from None
            raise

    async def make_dirs(self, path: str, *, mode: int = 0o700) -> None:
        target = self._inside(path)
        root = Path(os.path.realpath(self.root))
        missing = [p for p in (target, *target.parents) if root in p.parents and not p.exists()]
        target.mkdir(mode=mode, parents=True, exist_ok=True)
        for made in missing:
            self._own(made)

    async def remove_tree(self, path: str) -> None:
        target = self._inside(path)
        if target == Path(os.path.realpath(self.root)):
            raise SandboxError(self._name, "remove_tree of the node root: use delete()")
        if target.is_dir() and not target.is_symlink():
            await asyncio.to_thread(shutil.rmtree, target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)

    async def ansible_target(self) -> AnsibleTarget:
        return AnsibleTarget(
            on_node=True,
            host_vars={
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
            },
        )

    # -- services ---------------------------------------------------------------

    async def start_service(
        self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None
    ) -> ServiceInfo:
        """Start a supervised service that outlives the deploy step."""
        return await self.supervisor.start(name, argv, env)

    def services(self) -> list[ServiceInfo]:
        return self.supervisor.services()

    async def stop_all(self) -> list[str]:
        """Stop every service this node's records know of (even an earlier engine's)."""
        return await self.supervisor.stop_all(self._kill_grace)

    async def start_requested_services(self) -> list[str]:
        """Start the services configs asked for in ``$CONVECTION_SERVICE_DIR``."""
        started = []
        for request in sorted((self.root / "services").glob("*.json")):
            name = self.supervisor.check_name(request.stem)
            argv, env = self._read_request(request)
            request.unlink(missing_ok=True)
            await self.supervisor.start(name, argv, env)
            started.append(name)
        return started

    def _read_request(self, request: Path) -> tuple[list[str], dict[str, str]]:
        try:
            with open(request, "rb") as f:
                body = json.loads(f.read(_REQUEST_LIMIT + 1))
        except (OSError, ValueError):
            body = None
        argv = body.get("argv") if isinstance(body, dict) else None
        env = (body.get("env") or {}) if isinstance(body, dict) else None
        if (
            not isinstance(argv, list)
            or not argv
            or not all(isinstance(a, str) for a in argv)
            or not isinstance(env, dict)
            or not all(isinstance(v, str) for v in env.values())
        ):
            raise SandboxError(
                self._name,
                f"service request {request.name} must be JSON "
                '{"argv": [strings], "env": {name: string}}',
            )
        return argv, env

    async def delete(self) -> None:
        """Stop every service and remove the whole sandbox tree."""
        if self.root.exists():
            await self.stop_all()
            await asyncio.to_thread(shutil.rmtree, self.root, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------

    def _spawn_options(self, env: Mapping[str, str]) -> dict[str, Any]:
        full = self.base_env()
        full.update(env)
        check_env(full)
        options: dict[str, Any] = {"env": full, "cwd": str(self.root / "work")}
        if self._run_as:
            options.update(self._run_as.popen_kwargs())
        return options

    def _inside(self, path: str | os.PathLike[str]) -> Path:
        """``path`` with its directory resolved (symlinks followed) and its last
        component kept as is; anything outside the root is refused. The last
        step is never followed: callers open it with ``O_NOFOLLOW``."""
        plain = Path(os.path.normpath(self.root / path))
        target = Path(os.path.realpath(plain.parent)) / plain.name
        root = Path(os.path.realpath(self.root))
        if target != root and root not in target.parents:
            raise SandboxError(self._name, f"path {path} is outside the node's sandbox")
        return target

    def _own(self, path: Path) -> None:
        if self._run_as and os.geteuid() == 0 and path != self.root:
            os.chown(path, self._run_as.uid, self._run_as.gid, follow_symlinks=False)


def _lookup_user(node: str, user: str | None) -> RunAs | None:
    if user is None:
        return None
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise SandboxError(node, f"no such OS user {user!r}") from None
    if os.geteuid() != 0 and entry.pw_uid != os.geteuid():
        raise SandboxError(node, f"running as user {user!r} needs the engine to run as root")
    return RunAs(user, entry.pw_uid, entry.pw_gid)
