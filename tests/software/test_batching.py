"""File batches and prepared runs: few SSH channels, the same guarantees.

Against real sshd hosts on loopback (and a local node, which must behave the
same). The channel counts are the pool's own count of channels it opened.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from pathlib import Path
from typing import Any

import pytest

from convection.software import (
    LocalNode,
    NodeError,
    SSHPool,
    SSHTransport,
    Transport,
    deploy,
)
from convection.software.transports.base import FileBatch, FileWrite

from .conftest import MakeHost, derived, run

ECHO = '#!/bin/sh\necho "$message"\nprintf %s "$message" > "$heat_outputs_path.result"\n'


def test_a_deployment_takes_four_channels_and_a_replay_one(make_host: MakeHost) -> None:
    """Before batching a deployment with one output took 12 channels."""

    async def scenario() -> list[Any]:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(0), pool)
            config = derived(ECHO, outputs=("result",), message="hello")
            first = await deploy(config, node)
            after_first = pool.channels_opened
            again = await deploy(config, node)
            return [first, after_first, again, pool.channels_opened - after_first]

    first, channels, again, replay_channels = run(scenario())
    assert first.ok and first.output_values["result"] == "hello"
    assert first.output_values["deploy_stdout"] == "hello\n"
    assert channels == 4  # marker, prepared run, outputs, record
    assert again.replayed and again.output_values["result"] == "hello"
    assert replay_channels == 1


def test_the_marker_is_on_the_host_before_the_script_runs(make_host: MakeHost) -> None:
    script = '#!/bin/sh\ncat ../deployed/*.json > "$heat_outputs_path.marker"\n'

    async def scenario() -> tuple[str, Any]:
        async with SSHPool() as pool:
            config = derived(script, outputs=("marker",))
            return config.id, await deploy(config, SSHTransport(make_host(1), pool))

    config_id, outcome = run(scenario())
    assert outcome.ok, outcome.status_reason
    marker = json.loads(outcome.output_values["marker"])
    assert marker["attempt"] == 1 and marker["config"]["id"] == config_id


def _transports(make_host: MakeHost, tmp_path: Path, pool: SSHPool) -> list[Transport]:
    return [SSHTransport(make_host(0), pool), LocalNode(tmp_path / "local", name="local")]


def test_apply_has_the_same_meaning_on_ssh_and_local_nodes(
    make_host: MakeHost, tmp_path: Path
) -> None:
    binary = bytes(range(256)) * 12289  # about 3 MiB, NUL bytes, no final newline

    async def exercise(node: Transport) -> None:
        work = await node.workdir()
        data_dir = f"{work}/data/deep"
        big, small, gone = f"{data_dir}/big", f"{data_dir}/small", f"{data_dir}/gone"
        await node.apply(
            FileBatch(
                make_dirs=(data_dir,),
                write=(
                    FileWrite(big, binary),
                    FileWrite(gone, b"x"),
                    FileWrite(small, b"1", 0o640),
                ),
            )
        )
        found = await node.apply(FileBatch(read=(big, small, f"{data_dir}/none")))
        assert found == {big: binary, small: b"1", f"{data_dir}/none": None}
        assert stat.S_IMODE(os.stat(small).st_mode) == 0o640
        # only_if_absent: something was read, so nothing changes
        kept = await node.apply(
            FileBatch(
                read=(small,), remove=(gone,), write=(FileWrite(small, b"2"),), only_if_absent=True
            )
        )
        assert kept == {small: b"1"} and Path(gone).exists()
        # nothing read: the removes and writes happen
        made = await node.apply(
            FileBatch(
                read=(f"{data_dir}/none",),
                remove=(gone,),
                write=(FileWrite(small, b"2"),),
                only_if_absent=True,
            )
        )
        assert made == {f"{data_dir}/none": None}
        assert not Path(gone).exists() and Path(small).read_bytes() == b"2"

    async def scenario() -> int:
        async with SSHPool() as pool:
            for node in _transports(make_host, tmp_path, pool):
                await exercise(node)
            return pool.channels_opened

    assert run(scenario()) == 4  # one per batch on the SSH host


def test_a_failed_prepare_runs_nothing_and_shows_no_data(
    make_host: MakeHost, tmp_path: Path
) -> None:
    secret = "s3cr3t-" + uuid.uuid4().hex
    ran = tmp_path / "ran"

    async def attempt(node: Transport) -> str:
        work = await node.workdir()
        plain = FileWrite(f"{work}/plain", b"a file, not a directory")
        await node.apply(FileBatch(make_dirs=(work,), write=(plain,)))
        prepare = FileBatch(write=(FileWrite(f"{work}/plain/inside", secret.encode()),))
        with pytest.raises((NodeError, OSError)) as caught:
            await node.run(["/bin/touch", str(ran)], prepare=prepare)
        return str(caught.value)

    async def scenario() -> list[str]:
        async with SSHPool() as pool:
            return [await attempt(n) for n in _transports(make_host, tmp_path, pool)]

    ssh_error, _local_error = run(scenario())
    assert "plain/inside" in ssh_error and secret not in ssh_error
    assert not ran.exists()


def test_a_command_exiting_125_is_not_a_failed_prepare(make_host: MakeHost) -> None:
    async def scenario() -> Any:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(0), pool)
            work = await node.workdir()
            prepare = FileBatch(make_dirs=(f"{work}/x",), write=(FileWrite(f"{work}/x/f", b"ok"),))
            return await node.run(
                ["/bin/sh", "-c", 'cat x/f; echo "no luck" >&2; exit 125'],
                cwd=work,
                prepare=prepare,
            )

    result = run(scenario())
    assert (result.status, result.stdout, result.stderr) == (125, b"ok", b"no luck\n")


def test_prepared_run_keeps_the_output_tail_and_takes_stdin(make_host: MakeHost) -> None:
    async def scenario() -> tuple[Any, Any, int]:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(1), pool)
            work = await node.workdir()
            prepare = FileBatch(write=(FileWrite(f"{work}/n", b"100000"),))
            bounded = await node.run(
                ["/bin/sh", "-c", 'seq 1 "$(cat n)"'],
                cwd=work,
                prepare=prepare,
                output_limit=1000,
            )
            before = pool.channels_opened
            piped = await node.run(["/bin/cat"], stdin=b"from stdin", prepare=prepare)
            return bounded, piped, pool.channels_opened - before

    bounded, piped, channels = run(scenario())
    assert len(bounded.stdout) == 1000 and bounded.stdout.endswith(b"\n99999\n100000\n")
    assert bounded.stdout_dropped > 0 and bounded.truncated
    assert piped.status == 0 and piped.stdout == b"from stdin"
    assert channels == 2  # the script arrives on stdin, so the command's needs its own


def test_the_command_keeps_the_login_umask(make_host: MakeHost) -> None:
    """The batch writes privately (umask 077); the command it starts must not."""

    async def scenario() -> list[bytes]:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(0), pool)
            work = await node.workdir()
            prepare = FileBatch(make_dirs=(work,), write=(FileWrite(f"{work}/f", b"x"),))
            umask = ["/bin/sh", "-c", "umask"]
            plain = await node.run(umask, stdin=b"")  # no batch on the command's channel
            prepared = await node.run(umask, prepare=prepare)
            return [plain.stdout, prepared.stdout]

    plain, prepared = run(scenario())
    assert prepared == plain and prepared.strip() != b"0077"
