"""Run one local command: own process group, bounded output, a hard timeout.

Why a process group: a config script starts children (``make`` starts
compilers, a script backgrounds a helper). Killing only the script on a
timeout would leave its children running and holding the output pipes, so
the runner starts every command in a new session (``start_new_session``)
and signals the whole group: SIGTERM, a grace period, then SIGKILL.

Why bounded reads: a script can print gigabytes. The runner reads both
pipes as they fill and keeps only the tail of each (:class:`TailBuffer`).
Once the command has exited, the pipes get a short time to drain; a
background child that still holds them open does not hang the deployment
(heat-agents' ``communicate()`` would wait for it forever).

Why not ``asyncio.create_subprocess_exec``: on Python 3.11 its ``wait()``
returns only once the pipes are closed, so a backgrounded child holding
stdout would hold the deployment too. The runner uses ``subprocess.Popen``,
learns of the exit from a pidfd (polling where there is none), and reads
the pipes with non-blocking reads on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from convection.software.transports._procfs import wait_group_gone
from convection.software.transports.base import RunResult, TailBuffer

#: After the command exits, wait at most this long for its pipes to close.
DRAIN_SECONDS: Final = 1.0
_CHUNK: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class RunAs:
    """The OS identity a command runs as (only honoured when we are root)."""

    name: str
    uid: int
    gid: int

    def popen_kwargs(self) -> dict[str, Any]:
        if os.geteuid() != 0 or self.uid == os.geteuid():
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}


async def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    stdin: bytes | None = None,
    timeout: float | None = None,
    output_limit: int,
    kill_grace: float,
    run_as: RunAs | None = None,
) -> RunResult:
    """Run ``argv`` to completion (or timeout) and return its result."""
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            **(run_as.popen_kwargs() if run_as else {}),
        )
    except OSError as exc:
        status = 127 if isinstance(exc, FileNotFoundError) else 126
        return RunResult(status, b"", f"{argv[0]}: {exc.strerror or exc}\n".encode())
    out, err = TailBuffer(output_limit), TailBuffer(output_limit)
    pipes = _Pipes(proc, out, err, stdin)
    timed_out = False
    try:
        try:
            await asyncio.wait_for(wait_exit(proc), timeout)
        except TimeoutError:
            timed_out = True
            await kill_group(proc, kill_grace)
    except BaseException:
        await kill_group(proc, 0.0)
        raise
    finally:
        await pipes.finish()
    status = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    return RunResult(
        status,
        out.getvalue(),
        err.getvalue(),
        timed_out=timed_out,
        stdout_dropped=out.dropped,
        stderr_dropped=err.dropped,
    )


class _Pipes:
    """Non-blocking reads of stdout/stderr (and a write of stdin) on the loop."""

    def __init__(
        self, proc: subprocess.Popen[bytes], out: TailBuffer, err: TailBuffer, data: bytes | None
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._open: dict[int, tuple[TailBuffer, asyncio.Future[None]]] = {}
        for stream, sink in ((proc.stdout, out), (proc.stderr, err)):
            assert stream is not None
            fd = stream.fileno()
            os.set_blocking(fd, False)
            self._open[fd] = (sink, self._loop.create_future())
            self._loop.add_reader(fd, self._readable, fd)
        self._streams = [s for s in (proc.stdin, proc.stdout, proc.stderr) if s is not None]
        self._stdin_fd = -1
        self._pending = memoryview(data or b"")
        if proc.stdin is not None:
            self._stdin_fd = proc.stdin.fileno()
            os.set_blocking(self._stdin_fd, False)
            self._loop.add_writer(self._stdin_fd, self._writable)

    def _readable(self, fd: int) -> None:
        sink, done = self._open[fd]
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            sink.write(chunk)
            return
        self._loop.remove_reader(fd)
        if not done.done():
            done.set_result(None)

    def _writable(self) -> None:
        try:
            sent = os.write(self._stdin_fd, self._pending[:_CHUNK])
        except BlockingIOError:
            return
        except OSError:
            sent = len(self._pending)
        self._pending = self._pending[sent:]
        if not self._pending:
            self._close_stdin()

    def _close_stdin(self) -> None:
        if self._stdin_fd >= 0:
            self._loop.remove_writer(self._stdin_fd)
            os.close(self._stdin_fd)
            self._stdin_fd = -1

    async def finish(self) -> None:
        """Give the pipes a moment to reach EOF, then close everything."""
        waits = [done for _sink, done in self._open.values()]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*waits), DRAIN_SECONDS)
        for fd in self._open:
            self._loop.remove_reader(fd)
        self._close_stdin()
        for stream in self._streams:
            with contextlib.suppress(OSError):
                stream.close()


async def wait_exit(proc: subprocess.Popen[bytes]) -> int:
    """Wait for the process to exit (not for its pipes) and reap it."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        while proc.poll() is None:
            await asyncio.sleep(0.05)
        return proc.returncode
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()

    def on_exit() -> None:
        if not exited.done():
            exited.set_result(None)

    loop.add_reader(pidfd, on_exit)
    try:
        if proc.poll() is None:
            await exited
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    return proc.wait()


async def kill_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM the process group, give it ``grace`` seconds, then SIGKILL it."""
    if grace > 0 and proc.poll() is None:
        _signal_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wait_exit(proc), grace)
    _signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wait_exit(proc), 5.0)
    # SIGKILL is delivered asynchronously: make sure the group is gone.
    await wait_group_gone(proc.pid, 5.0)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
