"""The transport seam: how Convection acts on a node.

A hook never knows whether its node is a sandbox on this machine or a host
over SSH. It asks a :class:`Transport` to run a command, move small files,
make and remove directories, all under the node's working directory (the
node's *footprint*, which deleting the node removes and nothing else). The
protocol is narrow on purpose: anything a hook needs beyond it (ansible's
own connection to the node) is described as data by :meth:`ansible_target`.

Output is bounded at the source: a transport keeps at most ``output_limit``
bytes of each stream, and it keeps the *tail*, because the end of a failed
run's output is where its error is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

#: Keep at most this much of each of stdout and stderr (the tail).
OUTPUT_LIMIT: Final = 1 << 20
#: The largest file :meth:`Transport.get_file` reads back.
FILE_LIMIT: Final = 16 << 20
#: Seconds between SIGTERM and SIGKILL when a timed-out run is stopped.
KILL_GRACE: Final = 2.0


@dataclass(frozen=True, slots=True)
class RunResult:
    """A finished command. ``status`` is the exit code, or minus the signal
    number when a signal ended it (Python's convention)."""

    status: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    stdout_dropped: int = 0
    stderr_dropped: int = 0

    @property
    def truncated(self) -> bool:
        return bool(self.stdout_dropped or self.stderr_dropped)


@dataclass(frozen=True, slots=True)
class AnsibleTarget:
    """How ``ansible-playbook`` reaches a node.

    ``on_node``: run ansible-playbook *through the transport* (a local
    sandbox: the play runs as the node's user, in its sandbox). Otherwise it
    runs on the controller and connects with ``host_vars`` (an SSH host,
    with the same key and known_hosts as the transport). ``private_key`` is
    key text that the hook writes to a private temporary file.
    """

    on_node: bool
    host_vars: Mapping[str, str]
    private_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class FileWrite:
    """One file to write (replacing it) with ``mode``; the data never shows in repr."""

    path: str
    data: bytes = field(repr=False)
    mode: int = 0o600


@dataclass(frozen=True, slots=True)
class FileBatch:
    """Small file operations done in one round trip to the node.

    Why: over SSH every operation is a channel, and a channel costs the host
    more than the operation itself; a deployment's housekeeping (its marker,
    the script, old outputs, the outputs it reads back) is a handful of tiny
    steps. They run in this order, stopping at the first failure:
    ``make_dirs`` (mode 0700), ``read`` (a missing file reads as ``None``),
    then ``remove`` and ``write``. With ``only_if_absent``, the removes and
    writes happen only when none of the ``read`` files exists: a create that
    sees what was there, as a deployment's once-only marker needs.
    """

    make_dirs: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    write: tuple[FileWrite, ...] = ()
    only_if_absent: bool = False

    @property
    def paths(self) -> tuple[str, ...]:
        return (*self.make_dirs, *self.read, *self.remove, *(w.path for w in self.write))


class TailBuffer:
    """Keeps the last ``limit`` bytes written to it, and counts what it dropped."""

    __slots__ = ("_buf", "dropped", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buf = bytearray()
        self.dropped = 0

    def write(self, chunk: bytes) -> None:
        self._buf += chunk
        extra = len(self._buf) - self.limit
        if extra > 0:
            del self._buf[:extra]
            self.dropped += extra

    def getvalue(self) -> bytes:
        return bytes(self._buf)


@runtime_checkable
class Transport(Protocol):
    """One node, as hooks see it. Paths are absolute paths on the node."""

    @property
    def node_name(self) -> str:
        """The node's name, for messages."""
        ...

    async def workdir(self) -> str:
        """The absolute path of Convection's footprint on the node."""
        ...

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
        """Run ``argv`` with ``env`` added to the node's environment. On
        timeout the command's whole process group is killed and the result
        says ``timed_out``; a lost connection raises.

        ``prepare`` (no reads) is applied first, in the same round trip
        where the node allows; when it fails, the command does not run and
        the error is raised."""
        ...

    async def apply(self, batch: FileBatch) -> dict[str, bytes | None]:
        """Do ``batch`` in one round trip; returns each ``read`` path's data
        (``None`` when there is no such file)."""
        ...

    async def put_file(self, path: str, data: bytes, *, mode: int = 0o600) -> None:
        """Write a file (replacing it) with ``mode``."""
        ...

    async def get_file(self, path: str) -> bytes | None:
        """Read a file, or ``None`` when there is none."""
        ...

    async def make_dirs(self, path: str, *, mode: int = 0o700) -> None:
        """Create a directory and its parents; existing ones are fine."""
        ...

    async def remove_tree(self, path: str) -> None:
        """Remove a file or a directory tree inside the footprint; absent is fine."""
        ...

    async def ansible_target(self) -> AnsibleTarget:
        """How ansible-playbook reaches this node."""
        ...


def check_env(env: Mapping[str, str]) -> None:
    """Refuse names a process environment cannot carry (empty, ``=``, NUL)."""
    for name, value in env.items():
        if not name or "=" in name or "\0" in name:
            raise ValueError(f"invalid environment variable name {name!r}")
        if "\0" in value:
            raise ValueError(f"environment variable {name} contains a NUL byte")
