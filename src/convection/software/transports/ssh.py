"""A node reached over SSH (asyncssh), with the same contract as a local one.

Every command runs on the pooled connection (:mod:`._ssh_pool`) inside the
host's concurrency limit. What :meth:`SSHTransport.run` does on the host:

1. it writes a one-shot launcher script to ``WORKDIR/run/ID.sh`` (mode 0600,
   inside a script sent on stdin, so no value ever appears on a command line
   or in ``ps``), after the run's ``prepare`` batch. The launcher records its
   process group id in ``WORKDIR/run/ID.pid``, deletes itself, changes
   directory and runs ``env NAME=VALUE... ARGV``;
2. the same script then runs ``setsid -w sh ID.sh`` (all of it through
   ``sudo -n`` when asked), so the command and all it starts form one new
   process group. Steps 1 and 2 share one channel; a command given ``stdin``
   takes a second one, since the script itself arrives on stdin;
3. on timeout it signals that group over a second channel (SIGTERM, a
   grace period, SIGKILL), exactly as a local node does;
4. a connection that drops mid-run raises :class:`ConnectionLost`: the
   command's fate on the host is unknown and it is never reported as done.

The environment is the login environment plus the command's ``env`` (sshd
accepts almost no variables from clients, hence the launcher). The host
needs a POSIX ``sh`` as login shell, ``setsid`` (util-linux) and the
coreutils (``base64``, ``head``, ``wc``, ``mv``): Linux.

File operations go one at a time (``put_file`` ...) or several to a channel
(:meth:`SSHTransport.apply`, :mod:`._batch_script`): a channel costs the host
more than the small file work a deployment does on it.

Deleting the node (:meth:`SSHTransport.remove_footprint`) removes the
working directory and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import shlex
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

import asyncssh

from convection.software.errors import ConnectionLost, NodeError, SandboxError
from convection.software.transports._batch_script import (
    batch_failure,
    batch_script,
    parse_reads,
)
from convection.software.transports._ssh_host import SSHHost
from convection.software.transports._ssh_pool import SSHPool
from convection.software.transports.base import (
    FILE_LIMIT,
    KILL_GRACE,
    OUTPUT_LIMIT,
    AnsibleTarget,
    FileBatch,
    FileWrite,
    RunResult,
    TailBuffer,
    check_env,
)

_CHUNK: Final = 64 * 1024
#: Bound on the short housekeeping commands (upload, mkdir, kill).
_AUX_TIMEOUT: Final = 60.0
_MISSING: Final = 3


class SSHTransport:
    """One SSH host as a node; implements :class:`Transport`."""

    def __init__(
        self,
        host: SSHHost,
        pool: SSHPool,
        *,
        name: str | None = None,
        kill_grace: float = KILL_GRACE,
    ) -> None:
        self.host = host
        self._pool = pool
        self._name = name or host.host
        self._kill_grace = kill_grace
        self._workdir: str | None = host.workdir
        if self._workdir is not None:
            _check_workdir(self._name, self._workdir, home=None)

    @property
    def node_name(self) -> str:
        return self._name

    async def connect(self) -> None:
        """Open (or reuse) the connection now: verifies, and with TOFU records, the host key."""
        await self._pool.connection(self.host)

    async def workdir(self) -> str:
        if self._workdir is None:
            result = await self._exec(["sh", "-c", 'printf %s "$HOME"'], sudo=False)
            home = result.stdout.decode(errors="replace")
            if result.status != 0 or not home.startswith("/"):
                raise NodeError(self._name, "could not find the login user's home directory")
            workdir = posixpath.join(home, ".convection", self._name)
            _check_workdir(self._name, workdir, home=home)
            self._workdir = workdir
        return self._workdir

    # -- Transport ------------------------------------------------------------

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
        if not argv or "=" in argv[0] or argv[0].startswith("-"):
            raise ValueError("argv[0] must be a command name without '=' or a leading '-'")
        check_env(env or {})
        prepare = prepare or FileBatch()
        if prepare.read:
            raise ValueError("a run's prepare batch cannot read files")
        await self._check_batch(prepare)
        rundir = posixpath.join(await self.workdir(), "run")
        run_id = uuid.uuid4().hex
        script = posixpath.join(rundir, f"{run_id}.sh")
        pidfile = posixpath.join(rundir, f"{run_id}.pid")
        launcher = FileWrite(script, _launcher(script, pidfile, cwd, env or {}, argv))
        batch = FileBatch(
            make_dirs=(*prepare.make_dirs, rundir),
            remove=prepare.remove,
            write=(*prepare.write, launcher),
        )
        nonce = uuid.uuid4().hex
        lines = batch_script(batch, nonce, FILE_LIMIT)
        wrapper = f"setsid -w sh {shlex.quote(script)}"
        cleanup = f"rc=$?; rm -f -- {shlex.quote(script)} {shlex.quote(pidfile)}; exit $rc"
        if stdin is None:
            # One channel: the batch, then the command (its stdin is empty).
            lines.append(f"{wrapper} </dev/null; {cleanup}")
            result = await self._exec(
                ["sh", "-s"],
                stdin=_script(lines),
                timeout=timeout,
                output_limit=output_limit,
                pidfile=pidfile,
            )
            self._raise_batch_failure(result, nonce)
            return result
        await self._run_batch(lines, nonce)
        return await self._exec(
            [
                "sh",
                "-c",
                'setsid -w sh "$1"; rc=$?; rm -f "$1" "$2"; exit $rc',
                "sh",
                script,
                pidfile,
            ],
            stdin=stdin,
            timeout=timeout,
            output_limit=output_limit,
            pidfile=pidfile,
        )

    async def apply(self, batch: FileBatch) -> dict[str, bytes | None]:
        """The whole batch on one channel (see :mod:`._batch_script`)."""
        await self._check_batch(batch)
        nonce = uuid.uuid4().hex
        result = await self._run_batch(batch_script(batch, nonce, FILE_LIMIT), nonce, batch.read)
        try:
            return parse_reads(batch.read, result.stdout)
        except ValueError as exc:
            raise NodeError(self._name, f"could not read files: {exc}") from None

    async def put_file(self, path: str, data: bytes, *, mode: int = 0o600) -> None:
        self._inside(path, await self.workdir())
        await self._checked(
            ["sh", "-c", 'umask 077 && cat > "$1" && chmod "$2" "$1"', "sh", path, f"{mode:o}"],
            stdin=data,
            what=f"write {path}",
        )

    async def get_file(self, path: str) -> bytes | None:
        self._inside(path, await self.workdir())
        script = 'if [ -f "$1" ]; then exec cat -- "$1"; else exit 3; fi'
        result = await self._exec(["sh", "-c", script, "sh", path], output_limit=FILE_LIMIT)
        if result.status == _MISSING:
            return None
        if result.status != 0:
            raise NodeError(self._name, f"could not read {path}: {_err(result)}")
        if result.stdout_dropped:
            raise NodeError(self._name, f"{path} is larger than {FILE_LIMIT} bytes")
        return result.stdout

    async def make_dirs(self, path: str, *, mode: int = 0o700) -> None:
        self._inside(path, await self.workdir())
        await self._checked(["mkdir", "-p", "-m", f"{mode:o}", "--", path], what=f"create {path}")

    async def remove_tree(self, path: str) -> None:
        workdir = await self.workdir()
        if posixpath.normpath(path) == workdir:
            raise SandboxError(self._name, "remove_tree of the working dir: use remove_footprint()")
        self._inside(path, workdir)
        await self._checked(["rm", "-rf", "--", path], what=f"remove {path}")

    async def remove_footprint(self) -> None:
        """Remove Convection's working dir on the host, and nothing else."""
        await self._checked(["rm", "-rf", "--", await self.workdir()], what="remove the workdir")

    async def ansible_target(self) -> AnsibleTarget:
        """ansible-playbook connects itself, with this transport's key and known_hosts."""
        await self.connect()  # with TOFU, the key is recorded before ssh(1) looks
        host = self.host
        ssh_opts = [
            f"-o UserKnownHostsFile={shlex.quote(str(host.known_hosts.resolve()))}",
            "-o GlobalKnownHostsFile=/dev/null",
            "-o StrictHostKeyChecking=yes",
            "-o IdentitiesOnly=yes",
            "-o IdentityAgent=none",
            "-o BatchMode=yes",
        ]
        host_vars = {
            "ansible_connection": "ssh",
            "ansible_host": host.host,
            "ansible_port": str(host.port),
            "ansible_user": host.username,
            "ansible_ssh_args": "-o ControlMaster=no",
            "ansible_ssh_common_args": " ".join(ssh_opts),
            "ansible_python_interpreter": "auto_silent",
            "ansible_remote_tmp": posixpath.join(await self.workdir(), "ansible-tmp"),
        }
        if host.sudo:
            host_vars.update(ansible_become="true", ansible_become_method="sudo")
        if host.private_key_path is not None:
            host_vars["ansible_ssh_private_key_file"] = str(host.private_key_path.resolve())
        return AnsibleTarget(on_node=False, host_vars=host_vars, private_key=host.private_key)

    # -- commands ---------------------------------------------------------------

    def _command(self, argv: Sequence[str], sudo: bool) -> str:
        prefix = ["sudo", "-n", "--"] if sudo and self.host.sudo else []
        return shlex.join([*prefix, *argv])

    async def _check_batch(self, batch: FileBatch) -> None:
        workdir = await self.workdir()
        for path in batch.paths:
            self._inside(path, workdir)
        if any(posixpath.normpath(path) == workdir for path in batch.remove):
            raise SandboxError(self._name, "remove_tree of the working dir: use remove_footprint()")

    async def _run_batch(
        self, lines: list[str], nonce: str, reads: Sequence[str] = ()
    ) -> RunResult:
        """Run a batch script alone (bounded like the other housekeeping)."""
        lines = [*lines, "exit 0"]
        limit = len(reads) * (FILE_LIMIT + 32) or OUTPUT_LIMIT
        result = await self._exec(
            ["sh", "-s"], stdin=_script(lines), timeout=_AUX_TIMEOUT, output_limit=limit
        )
        self._raise_batch_failure(result, nonce)
        if result.status != 0:
            raise NodeError(self._name, f"could not do its file operations: {_err(result)}")
        return result

    def _raise_batch_failure(self, result: RunResult, nonce: str) -> None:
        message = batch_failure(result, nonce)
        if message is not None:
            raise NodeError(self._name, message)

    async def _checked(self, argv: Sequence[str], *, what: str, stdin: bytes | None = None) -> None:
        result = await self._exec(argv, stdin=stdin, timeout=_AUX_TIMEOUT)
        if result.status != 0:
            raise NodeError(self._name, f"could not {what}: {_err(result)}")

    async def _exec(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = _AUX_TIMEOUT,
        output_limit: int = OUTPUT_LIMIT,
        pidfile: str | None = None,
        sudo: bool = True,
        limited: bool = True,
    ) -> RunResult:
        """Run one command on a pooled channel, within the host's limit
        (``limited=False`` only for the kill of a command that holds a slot)."""
        async with self._pool.limiter(self.host) if limited else contextlib.nullcontext():
            conn, proc = await self._open_channel(self._command(argv, sudo))
            try:
                return await self._drive(proc, stdin, timeout, output_limit, pidfile)
            except (asyncssh.Error, OSError) as exc:
                await self._pool.discard(self.host, conn)
                raise self._lost(argv) from exc

    async def _open_channel(
        self, command: str
    ) -> tuple[asyncssh.SSHClientConnection, asyncssh.SSHClientProcess[bytes]]:
        """Open a channel; a pooled connection found dead is replaced once
        (nothing has run yet, so trying again is safe)."""
        for attempt in (1, 2):
            conn = await self._pool.connection(self.host)
            try:
                self._pool.channels_opened += 1
                proc = await conn.create_process(command, encoding=None)
            except (asyncssh.Error, OSError) as exc:
                await self._pool.discard(self.host, conn)
                if attempt == 2:
                    raise self._lost(["open a channel"]) from exc
                continue
            return conn, proc
        raise AssertionError("unreachable")

    async def _drive(
        self,
        proc: asyncssh.SSHClientProcess[bytes],
        stdin: bytes | None,
        timeout: float | None,
        output_limit: int,
        pidfile: str | None,
    ) -> RunResult:
        out, err = TailBuffer(output_limit), TailBuffer(output_limit)
        if stdin:
            proc.stdin.write(stdin)
        proc.stdin.write_eof()
        pumps = asyncio.gather(_pump(proc.stdout, out), _pump(proc.stderr, err))
        timed_out = False
        try:
            await asyncio.wait_for(asyncio.shield(pumps), timeout)
        except TimeoutError:
            timed_out = True
            await self._kill(pidfile, pumps)
        except asyncio.CancelledError:
            # The caller gave up (a cancelled job): do not leave the command
            # running on the host, as a local node would not.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._kill(pidfile, pumps, grace=0.0), 10.0)
            raise
        finally:
            if not pumps.done():
                pumps.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pumps
        if timed_out:
            proc.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait_closed(), 5.0)
        status = proc.returncode
        if status is None and not timed_out:
            raise asyncssh.ConnectionLost("channel closed without an exit status")
        return RunResult(
            -9 if timed_out else int(status or 0),
            out.getvalue(),
            err.getvalue(),
            timed_out=timed_out,
            stdout_dropped=out.dropped,
            stderr_dropped=err.dropped,
        )

    async def _kill(
        self, pidfile: str | None, pumps: asyncio.Future[Any], grace: float | None = None
    ) -> None:
        """Signal the command's process group: TERM, grace, KILL."""
        if pidfile is None:
            return
        signal_group = 'pg=$(cat "$1" 2>/dev/null) && [ -n "$pg" ] && kill -s "$2" -- -"$pg"'
        grace = self._kill_grace if grace is None else grace
        steps = (("TERM", grace), ("KILL", 5.0)) if grace > 0 else (("KILL", 5.0),)
        for sig, wait in steps:
            with contextlib.suppress(NodeError):
                await self._exec(
                    ["sh", "-c", signal_group, "sh", pidfile, sig],
                    timeout=_AUX_TIMEOUT,
                    limited=False,
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(pumps), wait)
                return

    def _lost(self, argv: Sequence[str]) -> ConnectionLost:
        if argv == ["open a channel"]:
            during = "opening a channel"
        else:
            during = "running a command" if argv[0] == "sh" else f"running {argv[0]}"
        return ConnectionLost(self.host.host, self.host.port, self.host.username, during)

    def _inside(self, path: str, workdir: str) -> None:
        norm = posixpath.normpath(path)
        if not posixpath.isabs(norm) or not (norm == workdir or norm.startswith(workdir + "/")):
            raise SandboxError(self._name, f"path {path} is outside the node's working dir")


async def _pump(stream: asyncssh.SSHReader[bytes], sink: TailBuffer) -> None:
    while chunk := await stream.read(_CHUNK):
        sink.write(chunk)


def _launcher(
    script: str, pidfile: str, cwd: str | None, env: Mapping[str, str], argv: Sequence[str]
) -> bytes:
    """The one-shot script: record the group, forget itself, run the command."""
    lines = [
        f"echo $$ > {shlex.quote(pidfile)}",
        f"rm -f {shlex.quote(script)}",
    ]
    if cwd:
        lines.append(f"cd {shlex.quote(cwd)} || exit 127")
    # Not exec'd: when a signal ends the command, this shell exits 128+N
    # normally, which setsid -w passes on (it reports an abnormal exit badly).
    assignments = [shlex.quote(f"{k}={v}") for k, v in env.items()]
    lines.append(" ".join(["env", *assignments, shlex.join(argv)]))
    return ("\n".join(lines) + "\n").encode()


def _script(lines: Sequence[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _err(result: RunResult) -> str:
    text = result.stderr.decode(errors="replace").strip()[-500:]
    return text or f"exit status {result.status}"


def _check_workdir(node: str, workdir: str, home: str | None) -> None:
    """Refuse a working dir whose removal would take more than Convection's files."""
    norm = posixpath.normpath(workdir)
    parts = [p for p in norm.split("/") if p]
    if not posixpath.isabs(norm) or len(parts) < 2 or norm == home:
        raise SandboxError(
            node, f"workdir {workdir!r} must be an absolute, dedicated directory (two levels deep)"
        )
