"""A :class:`FileBatch` as one ``sh`` script, so an SSH host does it on one channel.

Why a script on stdin: a channel costs the host a session, a login shell and
an exec, several times what a ``mkdir`` or a small ``cat`` costs; the batch
turns a deployment's housekeeping into one. File contents travel inside the
script as base64 here-documents, so no value ever appears on a command line
(or in ``ps``). Each write goes to a temporary name and is renamed into
place: a reader sees the old file or the whole new one, never a torn record.

Failures stop the script with :data:`FAILED_STATUS` and a last stderr line
holding a per-call nonce, which a command run after the batch cannot know:
so a command that itself exits 125 is not mistaken for a failed batch.
Reads come back on stdout as ``F <size>\\n<bytes>`` or ``N\\n`` per path.
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Sequence
from typing import Final

from convection.software.transports.base import FileBatch, FileWrite, RunResult

FAILED_STATUS: Final = 125
_EOF: Final = "__CONVECTION_EOF__"  # not in base64's alphabet


def batch_script(batch: FileBatch, nonce: str, file_limit: int) -> list[str]:
    """The script lines that do ``batch`` (no trailing ``exit``)."""
    lines = [
        # Private while the batch writes; the login's umask again after it,
        # for the command a run starts (its files must not turn 0600).
        "cv_umask=$(umask); umask 077",
        f"fail() {{ printf '%s\\n' \"$1\" {shlex.quote(nonce)} >&2; exit {FAILED_STATUS}; }}",
    ]
    lines += [_mkdir(path) for path in batch.make_dirs]
    if batch.read:
        lines.append("found=0")
        lines += [_read(path, file_limit) for path in batch.read]
    changes = [_remove(path) for path in batch.remove]
    changes += [line for write in batch.write for line in _write(write, nonce)]
    if changes and batch.only_if_absent and batch.read:
        lines += ['if [ "$found" = 0 ]; then', *changes, "fi"]
    else:
        lines += changes
    lines.append('umask "$cv_umask"')
    return lines


def _fail(what: str) -> str:
    return f"fail {shlex.quote(what)}"


def _mkdir(path: str) -> str:
    return f"mkdir -p -m 700 -- {shlex.quote(path)} || {_fail(f'could not create {path}')}"


def _read(path: str, file_limit: int) -> str:
    p = shlex.quote(path)
    return (
        f"if [ -f {p} ]; then found=1; n=$(wc -c < {p}) || {_fail(f'could not read {path}')}; "
        f'[ "$n" -le {file_limit} ] || {_fail(f"{path} is larger than {file_limit} bytes")}; '
        f'printf \'F %d\\n\' "$n"; head -c "$n" -- {p} || {_fail(f"could not read {path}")}; '
        "else printf 'N\\n'; fi"
    )


def _remove(path: str) -> str:
    return f"rm -rf -- {shlex.quote(path)} || {_fail(f'could not remove {path}')}"


def _write(write: FileWrite, nonce: str) -> list[str]:
    target = shlex.quote(write.path)
    temp = shlex.quote(f"{write.path}.{nonce}.tmp")
    failed = _fail(f"could not write {write.path}")
    return [
        f"base64 -d > {temp} <<'{_EOF}' || {{ rm -f -- {temp}; {failed}; }}",
        *base64.encodebytes(write.data).decode().splitlines(),
        _EOF,
        f"{{ chmod {write.mode:o} {temp} && mv -f -- {temp} {target}; }} "
        f"|| {{ rm -f -- {temp}; {failed}; }}",
    ]


def batch_failure(result: RunResult, nonce: str) -> str | None:
    """The batch's own error message when the batch failed, else ``None``."""
    if result.status != FAILED_STATUS:
        return None
    lines = result.stderr.decode(errors="replace").rstrip("\n").split("\n")
    if len(lines) < 2 or lines[-1] != nonce:
        return None
    return lines[-2]


def parse_reads(paths: Sequence[str], stdout: bytes) -> dict[str, bytes | None]:
    """The read files from the batch's stdout; ``ValueError`` if malformed."""
    found: dict[str, bytes | None] = {}
    pos = 0
    for path in paths:
        end = stdout.index(b"\n", pos)
        head, pos = stdout[pos:end], end + 1
        if head == b"N":
            found[path] = None
            continue
        kind, _, size = head.partition(b" ")
        if kind != b"F" or not size.isdigit():
            raise ValueError(f"unexpected reply for {path}")
        data = stdout[pos : pos + int(size)]
        if len(data) != int(size):
            raise ValueError(f"short reply for {path}")
        found[path], pos = data, pos + int(size)
    if pos != len(stdout):
        raise ValueError("unexpected output after the batch")
    return found
