"""Convection::SSH::Host through real stacks, against real sshd hosts."""

from __future__ import annotations

import asyncio
import getpass
import json
import logging
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from convection.cli.main import run as cli_run
from convection.resources.api import InMemoryContext, Peer, ResourceFailure
from convection.resources.nodes import SSHHostResource, close_ssh_pools, transport_for
from convection.software import HostKeyMismatch, SSHTransport

from .conftest import Env, SshdHost, start_sshd

HOST = """
parameters:
  host: {type: string}
  port: {type: number}
  key_file: {type: string}
  known_hosts: {type: string}
  tofu: {type: boolean, default: false}
  workdir: {type: string, default: ""}
resources:
  box:
    type: Convection::SSH::Host
    properties:
      host: {get_param: host}
      port: {get_param: port}
      private_key_file: {get_param: key_file}
      known_hosts: {get_param: known_hosts}
      trust_on_first_use: {get_param: tofu}
      workdir: {get_param: workdir}
outputs:
  address: {value: {get_attr: [box, first_address]}}
  networks: {value: {get_attr: [box, networks]}}
  workdir: {value: {get_attr: [box, workdir]}}
"""


def params(sshd: SshdHost, keys: Path, known_hosts: Path, **extra: Any) -> dict[str, Any]:
    return {
        "host": sshd.address,
        "port": sshd.port,
        "key_file": str(keys / "client_key"),
        "known_hosts": str(known_hosts),
        **extra,
    }


def run_on(env: Env, resource: str, *argv: str) -> Any:
    async def go() -> Any:
        try:
            return await transport_for(env.peer(resource)).run(list(argv))
        finally:
            await close_ssh_pools()

    return asyncio.run(go())


@pytest.fixture
def trusted(tmp_path: Path, sshd_hosts: list[SshdHost]) -> Path:
    path = tmp_path / "known_hosts"
    path.write_text("".join(h.known_hosts_line() for h in sshd_hosts))
    return path


def test_create_connects_pins_the_key_and_delete_removes_only_its_workdir(
    env: Env, ssh_keys: Path, trusted: Path, sshd_hosts: list[SshdHost]
) -> None:
    sshd = sshd_hosts[0]
    env.create(HOST, **params(sshd, ssh_keys, trusted))
    assert env.status()[0] == "CREATE_COMPLETE", env.status()
    row = env.record("box")
    assert row.data["host_key"] == " ".join(sshd.host_key_pub.split()[:2])
    out = env.outputs()
    assert out["address"] == sshd.address and out["networks"] == {"ssh": [sshd.address]}
    workdir = Path(out["workdir"])
    home = Path(os.path.expanduser("~"))
    assert workdir.parent == home / ".convection" and workdir.is_dir()
    (home / ".convection" / "keep-me").write_text("not Convection's to remove")
    try:
        result = run_on(env, "box", "sh", "-c", "echo $USER")
        assert result.status == 0 and result.stdout.decode().strip() == getpass.getuser()
        assert env.delete()["stack_status"] == "DELETE_COMPLETE"
        assert not workdir.exists()
        assert (home / ".convection" / "keep-me").exists()
    finally:
        (home / ".convection" / "keep-me").unlink(missing_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)


def test_one_connection_per_host_is_shared_by_deployments(
    env: Env, ssh_keys: Path, trusted: Path, sshd_hosts: list[SshdHost], tmp_path: Path
) -> None:
    env.create(HOST, **params(sshd_hosts[0], ssh_keys, trusted))

    async def go() -> tuple[list[int], int]:
        transports = [transport_for(env.peer("box")) for _ in range(6)]
        try:
            results = await asyncio.gather(*(t.run(["true"]) for t in transports))
            assert isinstance(transports[0], SSHTransport)
            pool = transports[0]._pool
            return [r.status for r in results], pool.connections_opened
        finally:
            await close_ssh_pools()

    statuses, opened = asyncio.run(go())
    assert statuses == [0] * 6 and opened == 1
    env.delete()


def free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def test_an_unreachable_host_fails_create_clearly(
    env: Env, ssh_keys: Path, trusted: Path, sshd_hosts: list[SshdHost]
) -> None:
    closed = params(sshd_hosts[0], ssh_keys, trusted)
    closed["port"] = free_port(sshd_hosts[0].address)
    env.create(HOST, **closed)
    status, reason = env.status()
    assert status == "CREATE_FAILED"
    assert "resources.box" in reason and "host unreachable: Connection refused" in reason
    assert any("host unreachable" in e for e in env.events())
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"  # nothing was placed


@pytest.mark.parametrize("tofu", [False, True])
def test_a_host_key_mismatch_is_always_refused(
    env: Env, ssh_keys: Path, tmp_path: Path, sshd_hosts: list[SshdHost], tofu: bool
) -> None:
    wrong = tmp_path / "wrong_known_hosts"
    impostor_key = sshd_hosts[1].host_key_pub.split()[:2]
    wrong.write_text(f"[{sshd_hosts[0].address}]:{sshd_hosts[0].port} {' '.join(impostor_key)}\n")
    env.create(HOST, **params(sshd_hosts[0], ssh_keys, wrong, tofu=tofu))
    status, reason = env.status()
    assert status == "CREATE_FAILED"
    assert "HOST KEY MISMATCH" in reason and str(wrong) in reason
    assert "host_key" not in env.record("box").data


def test_an_unknown_host_without_tofu_is_refused(
    env: Env, ssh_keys: Path, tmp_path: Path, sshd_hosts: list[SshdHost]
) -> None:
    env.create(HOST, **params(sshd_hosts[0], ssh_keys, tmp_path / "absent"))
    status, reason = env.status()
    assert status == "CREATE_FAILED" and "trust_on_first_use is off" in reason


@pytest.fixture
def own_sshd(
    tmp_path: Path, ssh_keys: Path, sshd_hosts: list[SshdHost]
) -> Iterator[tuple[SshdHost, Path]]:
    """A private sshd (its host key is replaced by one test)."""
    authorized = tmp_path / "authorized_keys"
    authorized.write_text((ssh_keys / "client_key.pub").read_text())
    sshd = start_sshd(tmp_path / "own-sshd", "127.0.0.4", authorized)
    yield sshd, authorized
    sshd.process.terminate()
    sshd.process.wait(5)


def _rekey_and_restart(sshd: SshdHost) -> None:
    """The host is rebuilt: same address and port, a new host key."""
    sshd.process.terminate()
    sshd.process.wait(5)
    key = sshd.directory / "ssh_host_ed25519_key"
    key.unlink()
    key.with_suffix(".pub").unlink()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    _restart(sshd)


def _restart(sshd: SshdHost) -> None:
    config = sshd.directory / "sshd_config"
    with open(sshd.directory / "sshd.log", "ab") as log:
        sshd.process = subprocess.Popen(
            ["/usr/sbin/sshd", "-D", "-e", "-f", str(config)], stderr=log
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex((sshd.address, sshd.port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"sshd did not come back: {(sshd.directory / 'sshd.log').read_text()}")


def test_trust_on_first_use_pins_the_key_and_a_changed_key_is_refused(
    env: Env, ssh_keys: Path, tmp_path: Path, own_sshd: tuple[SshdHost, Path]
) -> None:
    sshd, _ = own_sshd
    operator_file = tmp_path / "operator_known_hosts"
    operator_file.write_text("")
    env.create(
        HOST, **params(sshd, ssh_keys, operator_file, tofu=True, workdir=str(tmp_path / "w"))
    )
    assert env.status()[0] == "CREATE_COMPLETE", env.status()
    pinned = env.record("box").data["host_key"]
    assert pinned == " ".join(sshd.host_key_pub.split()[:2])
    assert operator_file.read_text() == ""  # the pin is the resource's, not the operator's file
    assert any("pinned host key ssh-ed25519 SHA256:" in e for e in env.events())
    assert run_on(env, "box", "true").status == 0

    _rekey_and_restart(sshd)
    with pytest.raises(HostKeyMismatch):
        run_on(env, "box", "true")
    deleted = env.delete()
    assert deleted["stack_status"] == "DELETE_FAILED"
    assert "HOST KEY MISMATCH" in deleted["stack_status_reason"]


HIDDEN_KEY = """
parameters:
  host: {type: string}
  port: {type: number}
  key: {type: string, hidden: true}
  host_key: {type: string}
resources:
  box:
    type: Convection::SSH::Host
    properties:
      host: {get_param: host}
      port: {get_param: port}
      private_key: {get_param: key}
      host_key: {get_param: host_key}
      workdir: /tmp/convection-hidden-key-test/work
"""


def cli_output(db: str, *args: str, capsys: pytest.CaptureFixture[str]) -> str:
    code = cli_run(["--db", db, "--project", "p", *args])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return out + err


def everything_shown(env: Env, db: str, capsys: pytest.CaptureFixture[str]) -> str:
    shown = [
        cli_output(db, "stack", "show", "s", "-f", "json", capsys=capsys),
        cli_output(db, "stack", "event", "list", "s", "-f", "json", capsys=capsys),
        cli_output(db, "stack", "resource", "list", "s", "-f", "json", capsys=capsys),
        cli_output(db, "stack", "resource", "show", "s", "box", "-f", "json", capsys=capsys),
        cli_output(db, "stack", "environment", "show", "s", capsys=capsys),
    ]
    return "\n".join([*shown, json.dumps(env.events())])


@pytest.mark.parametrize("valid", [True, False])
def test_a_key_from_a_hidden_parameter_never_shows(
    env: Env,
    ssh_keys: Path,
    sshd_hosts: list[SshdHost],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    valid: bool,
) -> None:
    caplog.set_level(logging.DEBUG)
    sshd = sshd_hosts[0]
    real = (ssh_keys / "client_key").read_text()
    key = real if valid else "-----BEGIN OPENSSH PRIVATE KEY-----\nsecretgarbage42\n"
    env.create(
        HIDDEN_KEY,
        host=sshd.address,
        port=sshd.port,
        key=key,
        host_key=" ".join(sshd.host_key_pub.split()[:2]),
    )
    status, reason = env.status()
    if valid:
        assert status == "CREATE_COMPLETE", reason
    else:
        assert status == "CREATE_FAILED"
        assert "the SSH private key from the private_key value could not be loaded" in reason
    db = f"sqlite:///{tmp_path / 'store.db'}"
    shown = everything_shown(env, db, capsys) + "\n".join(r.getMessage() for r in caplog.records)
    body = key.splitlines()[1]
    assert body not in shown and "secretgarbage42" not in shown
    assert "box" in shown  # the commands did show the stack
    env.delete()
    shutil.rmtree("/tmp/convection-hidden-key-test", ignore_errors=True)


def test_a_template_with_neither_key_is_refused_at_the_property(env: Env) -> None:
    with pytest.raises(Exception, match=r"resources\.box\.properties\.private_key"):
        env.create(
            """
            resources:
              box:
                type: Convection::SSH::Host
                properties: {host: example.org}
            """
        )


def test_transport_for_an_ssh_host_that_never_connected_is_refused(env: Env) -> None:
    peer = Peer(
        "h", "Convection::SSH::Host", "CREATE", "FAILED", "x", "x", {}, {}, {"node_kind": "ssh"}
    )
    with pytest.raises(ResourceFailure, match="has not connected to its host yet"):
        transport_for(peer)


def test_check_reaches_the_host_and_finds_a_missing_workdir(
    env: Env, ssh_keys: Path, trusted: Path, sshd_hosts: list[SshdHost], tmp_path: Path
) -> None:
    workdir = tmp_path / "remote" / "convection"
    env.create(HOST, **params(sshd_hosts[1], ssh_keys, trusted, workdir=str(workdir)))
    assert workdir.is_dir()
    assert env.check()["stack_status"] == "CHECK_COMPLETE"
    shutil.rmtree(workdir)
    checked = env.check()
    assert checked["stack_status"] == "CHECK_FAILED"
    assert f"the working dir {workdir} is missing" in checked["stack_status_reason"]


NOVA_SERVER = """
resources:
  server:
    type: OS::Nova::Server
    properties:
      name: db-1
      image: fedora-40
      flavor: m1.small
      key_name: ops
      networks: [{network: private, fixed_ip: 127.0.0.22}]
      user_data_format: SOFTWARE_CONFIG
outputs:
  ip: {value: {get_attr: [server, first_address]}}
"""


@pytest.fixture
def sshd_on_port_22(
    tmp_path: Path, ssh_keys: Path, sshd_hosts: list[SshdHost]
) -> Iterator[SshdHost]:
    """An sshd on 127.0.0.22 port 22, where a Nova template's host is reached."""
    if os.geteuid() != 0:
        pytest.skip("listening on port 22 needs root")
    authorized = tmp_path / "authorized_keys"
    authorized.write_text((ssh_keys / "client_key.pub").read_text())
    sshd = start_sshd(tmp_path / "sshd22", "127.0.0.22", authorized)
    sshd.process.terminate()
    sshd.process.wait(5)
    config = sshd.directory / "sshd_config"
    config.write_text(config.read_text().replace(f"127.0.0.22:{sshd.port}", "127.0.0.22:22"))
    sshd.port = 22
    _restart(sshd)
    yield sshd
    sshd.process.terminate()
    sshd.process.wait(5)


def test_a_nova_server_maps_to_an_ssh_host_by_key_name_and_fixed_ip(
    env: Env,
    ssh_keys: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sshd_on_port_22: SshdHost,
) -> None:
    home = tmp_path / "operator"
    (home / ".ssh").mkdir(parents=True)
    shutil.copy(ssh_keys / "client_key", home / ".ssh" / "ops")
    (home / ".ssh" / "known_hosts").write_text(sshd_on_port_22.known_hosts_line())
    monkeypatch.setenv("HOME", str(home))  # the engine user's ~ (key dir and known_hosts)
    done = env.create(
        NOVA_SERVER, env="resource_registry:\n  OS::Nova::Server: Convection::SSH::Host\n"
    )
    assert done["stack_status"] == "CREATE_COMPLETE", done
    assert env.outputs() == {"ip": "127.0.0.22"}
    assert run_on(env, "server", "true").status == 0
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"


def test_the_cli_says_why_a_host_is_unreachable(
    ssh_keys: Path,
    trusted: Path,
    sshd_hosts: list[SshdHost],
    tmp_path: Path,
    node_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    template = tmp_path / "host.yaml"
    template.write_text("heat_template_version: 2018-08-31\n" + HOST)
    values = params(sshd_hosts[0], ssh_keys, trusted)
    values["port"] = free_port(sshd_hosts[0].address)
    flags = [f"--parameter={k}={v}" for k, v in values.items()]
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    code = cli_run(["--db", db, "stack", "create", "-t", str(template), *flags, "s", "--wait"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "host unreachable: Connection refused" in out + err
    assert "Traceback" not in out + err


def test_sudo_runs_the_hosts_commands_through_sudo(
    env: Env, ssh_keys: Path, trusted: Path, sshd_hosts: list[SshdHost], tmp_path: Path
) -> None:
    if os.geteuid() != 0 or shutil.which("sudo") is None:
        pytest.skip("needs root's passwordless sudo")
    with_sudo = HOST.replace(
        "      workdir: {get_param: workdir}",
        "      workdir: {get_param: workdir}\n      sudo: true",
    )
    env.create(
        with_sudo, **params(sshd_hosts[0], ssh_keys, trusted, workdir=str(tmp_path / "w" / "c"))
    )
    assert env.status()[0] == "CREATE_COMPLETE", env.status()
    through = run_on(env, "box", "sh", "-c", 'echo "$(id -u) ${SUDO_USER:-no sudo}"')
    assert through.stdout.decode().split() == ["0", getpass.getuser()]
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"


def test_create_is_idempotent_after_a_crash_and_keeps_its_pin(
    node_root: Path, ssh_keys: Path, trusted: Path, sshd_hosts: list[SshdHost], tmp_path: Path
) -> None:
    sshd = sshd_hosts[0]
    props = {
        "host": sshd.address,
        "port": sshd.port,
        "private_key_file": str(ssh_keys / "client_key"),
        "known_hosts": str(trusted),
        "workdir": str(tmp_path / "remote" / "c"),
        "trust_on_first_use": False,
    }
    plugin = SSHHostResource()
    ctx = InMemoryContext(resource_name="box", stack_name="s")

    async def create() -> None:
        try:
            await plugin.create(ctx, props)
        finally:
            await close_ssh_pools()

    asyncio.run(create())
    first = dict(ctx.data)
    assert first["host_key"] == " ".join(sshd.host_key_pub.split()[:2])
    assert ctx.physical_id is not None
    # A re-run (the engine crashed before recording completion) finds the
    # pin and the working dir: no second first contact, no new event.
    trusted.write_text("")  # even with the operator's file emptied since
    events = list(ctx.events)
    asyncio.run(create())
    assert ctx.data == first and ctx.events == events


def test_create_persists_its_id_before_connecting(
    node_root: Path, ssh_keys: Path, tmp_path: Path, sshd_hosts: list[SshdHost]
) -> None:
    props = {
        "host": sshd_hosts[0].address,
        "port": free_port(sshd_hosts[0].address),
        "private_key_file": str(ssh_keys / "client_key"),
        "known_hosts": str(tmp_path / "none"),
        "connect_timeout": 5,
    }
    ctx = InMemoryContext(resource_name="box")
    with pytest.raises(ResourceFailure, match="host unreachable"):
        asyncio.run(SSHHostResource().create(ctx, props))
    assert ctx.physical_id is not None and ctx.data["host"] == sshd_hosts[0].address
    assert "host_key" not in ctx.data  # so delete knows nothing was placed
    asyncio.run(SSHHostResource().delete(ctx, props))


class CountingProxy:
    """A loopback TCP relay to one sshd that counts the connections made
    through it: each is one SSH handshake the host paid for."""

    def __init__(self, target: SshdHost) -> None:
        self.target = target
        self.accepted = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, self.target.address, 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection(self.target.address, self.target.port)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except OSError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def close(self) -> None:
        assert self.server is not None
        self.server.close()


@pytest.mark.parametrize("how", ["host_key", "tofu"])
def test_create_and_later_deployments_share_one_handshake(
    node_root: Path, ssh_keys: Path, sshd_hosts: list[SshdHost], tmp_path: Path, how: str
) -> None:
    """The connection that verified the host at create is the one deployments
    in the same process use: one handshake per host, however verified."""
    sshd = sshd_hosts[0]
    proxy = CountingProxy(sshd)
    props: dict[str, Any] = {
        "host": sshd.address,
        "private_key_file": str(ssh_keys / "client_key"),
        "known_hosts": str(tmp_path / "empty_known_hosts"),
        "workdir": str(tmp_path / "remote" / "one"),
    }
    if how == "host_key":
        props["host_key"] = sshd.host_key_pub
    else:
        props["trust_on_first_use"] = True
    plugin = SSHHostResource()
    ctx = InMemoryContext(resource_name="box", stack_name="s")

    async def go() -> tuple[list[int], bytes | None]:
        props["port"] = await proxy.start()
        try:
            await plugin.create(ctx, props)
            peer = Peer(
                "box",
                plugin.type_name,
                "CREATE",
                "COMPLETE",
                ctx.physical_id,
                ctx.physical_id,
                props,
                {},
                dict(ctx.data),
            )
            runs = await asyncio.gather(*(transport_for(peer).run(["true"]) for _ in range(3)))
            marker = await transport_for(peer).get_file(
                str(tmp_path / "remote/one/.convection-node")
            )
            return [r.status for r in runs], marker
        finally:
            await close_ssh_pools()
            await proxy.close()

    statuses, marker = asyncio.run(go())
    assert statuses == [0, 0, 0] and marker is not None and b"working dir" in marker
    assert proxy.accepted == 1
    assert ctx.data["host_key"] == " ".join(sshd.host_key_pub.split()[:2])


def test_a_failed_working_dir_keeps_the_pin_for_delete(
    node_root: Path, ssh_keys: Path, trusted: Path, sshd_hosts: list[SshdHost], tmp_path: Path
) -> None:
    """The pin and the working dir are recorded together, but when the working
    dir fails after the host was reached, the pin is still recorded: something
    may be on the host, and delete only cleans up a host it knows it reached."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    props = {
        "host": sshd_hosts[0].address,
        "port": sshd_hosts[0].port,
        "private_key_file": str(ssh_keys / "client_key"),
        "known_hosts": str(trusted),
        "workdir": str(blocker / "w"),
    }
    ctx = InMemoryContext(resource_name="box")

    async def go(action: str) -> None:
        try:
            await getattr(SSHHostResource(), action)(ctx, props)
        finally:
            await close_ssh_pools()

    with pytest.raises(ResourceFailure, match="could not create"):
        asyncio.run(go("create"))
    assert ctx.data["host_key"] == " ".join(sshd_hosts[0].host_key_pub.split()[:2])
    assert "workdir" not in ctx.data
    asyncio.run(go("delete"))
    assert blocker.read_text() == "not a directory"
