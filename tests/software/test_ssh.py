"""The SSH transport against two real sshd hosts on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from convection.software import (
    AuthenticationFailed,
    ConnectionLost,
    DeploymentInterrupted,
    HostKeyMismatch,
    HostKeyUnknown,
    HostUnreachable,
    PrivateKeyError,
    SandboxError,
    SSHHost,
    SSHPool,
    SSHTransport,
    deploy,
)

from .conftest import MakeHost, derived, run


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_script_deploys_on_both_hosts(make_host: MakeHost) -> None:
    script = """#!/bin/sh
printf '%s' "$settings" > "$heat_outputs_path.settings"
echo "on $(hostname) as $(id -un) in $PWD"
"""

    async def scenario() -> list[Any]:
        async with SSHPool() as pool:
            nodes = [SSHTransport(make_host(i), pool, name=f"h{i}") for i in (0, 1)]
            config = derived(script, outputs=("settings",), settings={"port": 8080})
            return [await deploy(config, node) for node in nodes]

    for outcome in run(scenario()):
        assert outcome.ok, outcome.status_reason
        assert outcome.output_values["settings"] == '{"port": 8080}'
        assert "heat-config-script" in outcome.output_values["deploy_stdout"]


def test_failure_carries_status_and_stderr(make_host: MakeHost) -> None:
    async def scenario() -> Any:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(1), pool)
            return await deploy(derived("#!/bin/sh\necho 'no such package' >&2\nexit 100\n"), node)

    outcome = run(scenario())
    assert outcome.status == "FAILED"
    assert "non-zero status code: 100" in outcome.status_reason
    assert "no such package" in outcome.status_reason


def test_timeout_kills_the_remote_process_group(make_host: MakeHost, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"#!/bin/sh\nsleep 60 &\necho $! > {pids}\necho $$ >> {pids}\nsleep 60\n"

    async def scenario() -> Any:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(0), pool, kill_grace=0.5)
            started = time.monotonic()
            result = await node.run(["/bin/sh", "-c", script], timeout=1.0)
            assert time.monotonic() - started < 8
            again = await node.run(["/bin/echo", "still usable"])
            assert again.stdout == b"still usable\n"
            return result

    result = run(scenario())
    assert result.timed_out and result.status == -9
    deadline = time.monotonic() + 3
    while any(_alive(int(p)) for p in pids.read_text().split()) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in map(int, pids.read_text().split()):
        assert not _alive(pid), f"remote process {pid} survived the timeout"


def test_cancelling_a_run_kills_it_on_the_host(make_host: MakeHost, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 60 & echo $! > {pids}; echo $$ >> {pids}; wait"

    async def scenario() -> None:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(1), pool)
            task = asyncio.create_task(node.run(["/bin/sh", "-c", script], timeout=60))
            while not (pids.exists() and len(pids.read_text().split()) == 2):
                await asyncio.sleep(0.02)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    run(scenario())
    deadline = time.monotonic() + 3
    while any(_alive(int(p)) for p in pids.read_text().split()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(int(p)) for p in pids.read_text().split())


def test_lost_connection_mid_run_is_a_clear_failure(
    make_host: MakeHost, sshd_hosts: list[Any], tmp_path: Path
) -> None:
    host = make_host(0)
    config = derived("#!/bin/sh\nsleep 20\n")

    async def kill_sessions_when_running() -> None:
        run_dir = Path(host.workdir or "") / "run"
        for _ in range(200):
            if list(run_dir.glob("*.pid")):
                break
            await asyncio.sleep(0.02)
        for pid in sshd_hosts[0].session_pids():
            os.kill(pid, signal.SIGKILL)

    async def scenario() -> None:
        async with SSHPool() as pool:
            node = SSHTransport(host, pool)
            killer = asyncio.create_task(kill_sessions_when_running())
            with pytest.raises(ConnectionLost) as lost:
                await asyncio.wait_for(deploy(config, node), 15)
            await killer
            assert lost.value.host == host.host and lost.value.port == host.port
            assert "result is unknown" in str(lost.value)
            _kill_leftover(Path(host.workdir or "") / "run")
            # The pool reconnects; the deployment, interrupted, is not re-run.
            with pytest.raises(DeploymentInterrupted, match="rerun_safe"):
                await deploy(config, node)
            assert pool.connections_opened == 2

    run(scenario())


def _kill_leftover(run_dir: Path) -> None:
    for pidfile in run_dir.glob("*.pid"):
        with contextlib.suppress(ValueError, ProcessLookupError):
            os.killpg(int(pidfile.read_text()), signal.SIGKILL)


def test_unreachable_host(make_host: MakeHost) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.2", 0))
        closed_port = s.getsockname()[1]
    host = make_host(0, port=closed_port)

    async def scenario() -> None:
        async with SSHPool() as pool:
            await SSHTransport(host, pool).connect()

    with pytest.raises(HostUnreachable) as err:
        run(scenario())
    assert (err.value.host, err.value.port) == ("127.0.0.2", closed_port)
    assert "refused" in err.value.reason.lower()


def test_trust_on_first_use_records_the_key(
    make_host: MakeHost, tmp_path: Path, sshd_hosts: list[Any]
) -> None:
    known = tmp_path / "fresh" / "known_hosts"

    async def connect(host: SSHHost) -> None:
        async with SSHPool() as pool:
            await SSHTransport(host, pool).connect()

    with pytest.raises(HostKeyUnknown, match="trust_on_first_use is off"):
        run(connect(make_host(1, known_hosts=known)))
    run(connect(make_host(1, known_hosts=known, trust_on_first_use=True)))
    assert known.read_text() == sshd_hosts[1].known_hosts_line()
    run(connect(make_host(1, known_hosts=known)))  # now known, TOFU or not
    assert known.read_text() == sshd_hosts[1].known_hosts_line()


def test_host_key_mismatch_is_refused_even_with_tofu(
    make_host: MakeHost, tmp_path: Path, sshd_hosts: list[Any]
) -> None:
    impostor = tmp_path / "impostor"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(impostor)], check=True)
    algorithm, blob = impostor.with_suffix(".pub").read_text().split()[:2]
    known = tmp_path / "known_hosts_wrong"
    entry = f"[{sshd_hosts[0].address}]:{sshd_hosts[0].port} {algorithm} {blob}\n"
    known.write_text(entry)

    async def connect() -> None:
        async with SSHPool() as pool:
            host = make_host(0, known_hosts=known, trust_on_first_use=True)
            await SSHTransport(host, pool).connect()

    with pytest.raises(HostKeyMismatch) as err:
        run(connect())
    assert "HOST KEY MISMATCH" in str(err.value) and "SHA256:" in err.value.offered
    assert known.read_text() == entry  # nothing recorded


def test_key_from_a_string_and_bad_keys(
    make_host: MakeHost, ssh_keys: Path, tmp_path: Path
) -> None:
    key_text = (ssh_keys / "client_key").read_text()

    async def echo(host: SSHHost) -> bytes:
        async with SSHPool() as pool:
            return (await SSHTransport(host, pool).run(["/bin/echo", "hi"])).stdout

    assert run(echo(make_host(0, private_key_path=None, private_key=key_text))) == b"hi\n"
    assert key_text not in repr(make_host(0, private_key_path=None, private_key=key_text))
    broken = key_text.replace("A", "B", 40)
    with pytest.raises(PrivateKeyError) as err:
        run(echo(make_host(0, private_key_path=None, private_key=broken)))
    assert "private_key value" in str(err.value) and broken[40:80] not in str(err.value)
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    with pytest.raises(AuthenticationFailed) as denied:
        run(echo(make_host(0, private_key_path=stranger)))
    assert denied.value.username == make_host(0).username


def test_one_connection_is_reused_for_many_runs(make_host: MakeHost) -> None:
    async def scenario() -> tuple[int, set[str]]:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(0), pool)
            peers = set()
            for _ in range(5):
                result = await node.run(["/bin/sh", "-c", 'echo "$SSH_CONNECTION"'])
                peers.add(result.stdout.decode().split()[1])  # the client's port
            await asyncio.gather(*(deploy(derived("#!/bin/sh\ntrue\n"), node) for _ in range(3)))
            return pool.connections_opened, peers

    opened, client_ports = run(scenario())
    assert opened == 1 and len(client_ports) == 1


def test_per_host_concurrency_limit_is_honoured(make_host: MakeHost, tmp_path: Path) -> None:
    shared = tmp_path / "running"
    shared.mkdir()
    counts = tmp_path / "counts"
    probe = f"touch {shared}/$$; ls {shared} | wc -l >> {counts}; sleep 0.3; rm {shared}/$$"

    async def scenario() -> float:
        async with SSHPool(sessions_per_host=2) as pool:
            node = SSHTransport(make_host(0), pool)
            started = time.monotonic()
            await asyncio.gather(*(node.run(["/bin/sh", "-c", probe]) for _ in range(6)))
            return time.monotonic() - started

    elapsed = run(scenario())
    seen = [int(n) for n in counts.read_text().split()]
    assert len(seen) == 6 and max(seen) == 2
    assert elapsed >= 0.85  # three waves of 0.3 s


def test_remove_footprint_removes_only_the_working_dir(make_host: MakeHost, tmp_path: Path) -> None:
    host = make_host(1)
    workdir = Path(host.workdir or "")
    neighbour = workdir.parent / "not-ours.txt"

    async def scenario() -> None:
        async with SSHPool() as pool:
            node = SSHTransport(host, pool)
            outcome = await deploy(derived("#!/bin/sh\ntrue\n"), node)
            assert outcome.ok
            neighbour.write_text("keep me")
            with pytest.raises(SandboxError):
                await node.put_file("/tmp/outside-convection", b"x")
            await node.remove_footprint()

    run(scenario())
    assert not workdir.exists() and neighbour.read_text() == "keep me"
    with pytest.raises(SandboxError):
        SSHTransport(make_host(1, workdir="/"), SSHPool())


@pytest.mark.skipif(not os.path.exists("/usr/bin/sudo"), reason="sudo is not installed")
def test_sudo_runs_every_command_through_sudo(make_host: MakeHost, tmp_path: Path) -> None:
    async def scenario() -> tuple[Any, Any]:
        async with SSHPool() as pool:
            node = SSHTransport(make_host(0, sudo=True), pool, kill_grace=0.2)
            outcome = await deploy(
                derived(
                    '#!/bin/sh\necho "$SUDO_COMMAND" > "$heat_outputs_path.how"\n', outputs=("how",)
                ),
                node,
            )
            timed = await node.run(["/bin/sleep", "30"], timeout=0.5)
            return outcome, timed

    outcome, timed = run(scenario())
    assert outcome.ok, outcome.status_reason
    # $SUDO_COMMAND: sudo ran the run's script (batch, then setsid -w sh LAUNCHER)
    assert str(outcome.output_values["how"]).strip().endswith("sh -s")
    assert timed.timed_out
