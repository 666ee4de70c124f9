"""Deployments on real SSH hosts (the sshd fixtures of tests/software) and
with the real ansible-playbook, through real stacks."""

from __future__ import annotations

import getpass
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Env, SshdHost, _software

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: write the output
      copy:
        content: "{{ greeting }} from {{ deploy_resource_name }} on {{ port }}"
        dest: "{{ heat_outputs_path }}.message"
"""


def ansible_template(server: str) -> str:
    playbook = "\n".join("        " + line for line in PLAYBOOK.strip().splitlines())
    return f"""
resources:
{server}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      group: ansible
      inputs: [{{name: greeting}}, {{name: port, type: Number}}]
      outputs: [{{name: message}}]
      config: |
{playbook}
  dep:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {{get_resource: cfg}}
      server: {{get_resource: node}}
      input_values: {{greeting: hello, port: 8080}}
outputs:
  stdout: {{value: {{get_attr: [dep, deploy_stdout]}}}}
  code: {{value: {{get_attr: [dep, deploy_status_code]}}}}
"""


def test_ansible_group_on_a_local_node(env: Env) -> None:
    shown = env.create(ansible_template("  node: {type: Convection::Local::Node}"))
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    out = env.outputs()
    assert out["code"] == 0
    assert "PLAY RECAP" in out["stdout"]
    message = _message_file(env)
    assert message == "hello from dep on 8080"


def _message_file(env: Env) -> str:
    sandbox = Path(str(env.record("node").data["sandbox"]))
    (found,) = [p for p in sandbox.rglob("*.message")]
    return found.read_text()


@pytest.fixture
def hosts(sshd_hosts: list[SshdHost], ssh_keys: Path, tmp_path: Path) -> Iterator[dict[str, Any]]:
    known = tmp_path / "known_hosts"
    known.write_text("".join(h.known_hosts_line() for h in sshd_hosts))
    yield {
        "sshd": sshd_hosts,
        "known": known,
        "key": (ssh_keys / "client_key").read_text(),
        "user": getpass.getuser(),
    }


def ssh_host(name: str, sshd: SshdHost, known: Path, user: str, workdir: Path) -> str:
    return f"""  {name}:
    type: Convection::SSH::Host
    properties:
      host: {sshd.address}
      port: {sshd.port}
      user: {user}
      private_key: {{get_param: key}}
      known_hosts: {known}
      workdir: {workdir}
"""


SSH_STACK = """
parameters:
  key: {type: string, hidden: true}
resources:
HOSTS
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      options: {timeout: TIMEOUT}
      inputs: [{name: n}]
      outputs: [{name: out}]
      config: |
        #!/bin/sh
        SCRIPT
  dep1:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: cfg}, server: {get_resource: h1}, input_values: {n: 1}}
  dep2:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: cfg}, server: {get_resource: h2}, input_values: {n: 2}}
"""


def ssh_stack(hosts: dict[str, Any], tmp_path: Path, script: str, timeout: int = 60) -> str:
    sshd = hosts["sshd"]
    text = "".join(
        ssh_host(f"h{i + 1}", sshd[i], hosts["known"], hosts["user"], tmp_path / f"r{i}")
        for i in range(2)
    )
    return (
        SSH_STACK.replace("HOSTS", text.rstrip("\n"))
        .replace("SCRIPT", script)
        .replace("TIMEOUT", str(timeout))
    )


def test_two_ssh_hosts_success_and_no_key_in_output(
    env: Env, hosts: dict[str, Any], tmp_path: Path
) -> None:
    text = ssh_stack(hosts, tmp_path, 'echo "host $n $(hostname -I 2>/dev/null | wc -c)"')
    shown = env.create(text, key=hosts["key"])
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert env.attr("dep1", "deploy_stdout").startswith("host 1 ")
    assert env.attr("dep2", "deploy_stdout").startswith("host 2 ")
    secret = hosts["key"].strip().splitlines()[1]
    everything = repr(env.events()) + repr(env.resources()) + repr(env.stacks.show("p", "s"))
    assert secret not in everything


def test_ssh_failure_and_timeout(env: Env, hosts: dict[str, Any], tmp_path: Path) -> None:
    script = '[ "$n" = 1 ] && { echo "h1 is broken" >&2; exit 4; }; sleep 30'
    shown = env.create(ssh_stack(hosts, tmp_path, script, timeout=2), key=hosts["key"])
    assert shown["stack_status"] == "CREATE_FAILED"
    res = env.resources()
    assert "non-zero status code: 4" in res["dep1"]["resource_status_reason"]
    assert "h1 is broken" in res["dep1"]["resource_status_reason"]
    assert "timed out after 2 s" in res["dep2"]["resource_status_reason"]


def test_ssh_connection_lost_mid_run(env: Env, hosts: dict[str, Any], tmp_path: Path) -> None:
    started = tmp_path / "started"
    script = f"touch {started}.$n; sleep 30"
    sshd: list[SshdHost] = hosts["sshd"]

    def cut() -> None:
        deadline = time.monotonic() + 60
        while not Path(f"{started}.1").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in sshd[0].session_pids():
            _software.os.kill(pid, 9)

    killer = threading.Thread(target=cut)
    killer.start()
    shown = env.create(ssh_stack(hosts, tmp_path, script, timeout=5), key=hosts["key"])
    killer.join()
    assert shown["stack_status"] == "CREATE_FAILED"
    reason = env.resources()["dep1"]["resource_status_reason"]
    assert "Deployment to server failed" in reason
    assert "lost" in reason.lower()


def test_ansible_over_ssh(env: Env, hosts: dict[str, Any], tmp_path: Path) -> None:
    sshd = hosts["sshd"][1]
    server = ssh_host("node", sshd, hosts["known"], hosts["user"], tmp_path / "ansible")
    text = "parameters:\n  key: {type: string, hidden: true}\n" + ansible_template(
        server.rstrip("\n")
    )
    shown = env.create(text, key=hosts["key"])
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert env.outputs()["code"] == 0
    (found,) = list((tmp_path / "ansible").rglob("*.message"))
    assert found.read_text() == "hello from dep on 8080"


def _private_sshd(tmp_path: Path, ssh_keys: Path, name: str) -> SshdHost:
    authorized = tmp_path / f"{name}_authorized_keys"
    authorized.write_text((ssh_keys / "client_key.pub").read_text())
    sshd: SshdHost = _software._start_sshd(tmp_path / name, "127.0.0.4", authorized)
    return sshd


def _stop(sshd: SshdHost) -> None:
    sshd.process.terminate()
    sshd.process.wait(5)
    for pid in sshd.session_pids():
        _software.os.kill(pid, 9)


def _one_host_stack(sshd: SshdHost, user: str, tmp_path: Path, deploy: bool) -> str:
    known = tmp_path / "private_known_hosts"
    known.write_text(sshd.known_hosts_line())
    text = (
        "parameters:\n  key: {type: string, hidden: true}\nresources:\n"
        + ssh_host("h1", sshd, known, user, tmp_path / "r-private")
        + "  cfg: {type: OS::Heat::SoftwareConfig, properties: {config: 'echo hi'}}\n"
    )
    if deploy:
        text += (
            "  dep:\n    type: OS::Heat::SoftwareDeployment\n"
            "    properties: {config: {get_resource: cfg}, server: {get_resource: h1}}\n"
        )
    return text


def test_unreachable_host_is_a_clear_failure(
    env: Env, hosts: dict[str, Any], ssh_keys: Path, tmp_path: Path
) -> None:
    sshd = _private_sshd(tmp_path, ssh_keys, "gone")
    try:
        first = env.create(_one_host_stack(sshd, hosts["user"], tmp_path, False), key=hosts["key"])
        assert first["stack_status"] == "CREATE_COMPLETE", first["stack_status_reason"]
    finally:
        _stop(sshd)
    shown = env.update(_one_host_stack(sshd, hosts["user"], tmp_path, True), key=hosts["key"])
    assert shown["stack_status"] == "UPDATE_FAILED"
    reason = env.resources()["dep"]["resource_status_reason"]
    assert "Deployment to server failed" in reason
    assert "127.0.0.4" in reason and "unreachable" in reason.lower()


def test_a_changed_host_key_is_refused(
    env: Env, hosts: dict[str, Any], ssh_keys: Path, tmp_path: Path
) -> None:
    sshd = _private_sshd(tmp_path, ssh_keys, "old")
    try:
        first = env.create(_one_host_stack(sshd, hosts["user"], tmp_path, False), key=hosts["key"])
        assert first["stack_status"] == "CREATE_COMPLETE", first["stack_status_reason"]
    finally:
        _stop(sshd)
    # the same address and port answer with another host key
    new_dir = tmp_path / "impostor"
    new_dir.mkdir()
    _software._keygen(new_dir / "key")
    config = (sshd.directory / "sshd_config").read_text()
    config = config.replace(str(sshd.directory / "ssh_host_ed25519_key"), str(new_dir / "key"))
    config = config.replace(str(sshd.directory / "sshd.pid"), str(new_dir / "sshd.pid"))
    (new_dir / "sshd_config").write_text(config)
    process = _software.subprocess.Popen(
        [_software.SSHD, "-D", "-e", "-f", str(new_dir / "sshd_config")]
    )
    try:
        _software._wait_listening(sshd.address, sshd.port, process, new_dir / "none.log")
        shown = env.update(_one_host_stack(sshd, hosts["user"], tmp_path, True), key=hosts["key"])
    finally:
        process.terminate()
        process.wait(5)
    assert shown["stack_status"] == "UPDATE_FAILED"
    reason = env.resources()["dep"]["resource_status_reason"]
    assert "Deployment to server failed" in reason
    assert "mismatch" in reason.lower() or "changed" in reason.lower()
    assert hosts["key"].strip().splitlines()[1] not in reason
