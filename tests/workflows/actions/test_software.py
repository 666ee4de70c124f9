"""convection.software.run on real nodes: a local sandbox (real processes in
a tmp_path node root) and a real sshd host of tests/software."""

from __future__ import annotations

import dataclasses
import getpass
from pathlib import Path
from typing import Any

import pytest

from convection.workflows import Failure, Success, default_registry, validate_input
from convection.workflows.actions.software import RunSoftwareConfig

from .conftest import CTX, run

SCRIPT = """#!/bin/sh
echo "hello $name from $deploy_action"
echo "a warning" >&2
printf '%s' "$((count * 2))" > "$heat_outputs_path.doubled"
printf '%s' "$name" > "$heat_outputs_path.who"
"""

CONFIG: dict[str, Any] = {
    "group": "script",
    "config": SCRIPT,
    "inputs": [{"name": "name", "type": "String"}, {"name": "count", "default": 1}],
    "outputs": [{"name": "doubled"}, {"name": "who"}, {"name": "missing"}],
    "options": {},
}


@pytest.fixture
def node_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "nodes"
    monkeypatch.setenv("CONVECTION_NODE_ROOT", str(root))
    return root


def software_run(params: dict[str, Any], ctx: Any = CTX) -> Any:
    cls = default_registry().lookup("convection.software.run")
    assert not list(validate_input(cls, params, ()))
    return run(cls().run(ctx, params))


def ctx_of(action_execution_id: str) -> Any:
    return dataclasses.replace(CTX, action_execution_id=action_execution_id)


def test_a_script_runs_on_a_local_node_with_inputs_and_outputs(node_root: Path) -> None:
    outcome = software_run(
        {
            "config": CONFIG,
            "server": {"type": "local", "name": "db1"},
            "input_values": {"name": "world", "count": 21},
        }
    )
    assert outcome == Success(
        {
            "outputs": {"doubled": "42", "who": "world"},
            "deploy_stdout": "hello world from CREATE\n",
            "deploy_stderr": "a warning\n",
            "deploy_status_code": 0,
        }
    )
    # It ran in the node's sandbox under the operator's node root.
    assert (node_root / "db1" / "work" / "deployed").is_dir()


def test_defaults_and_action_reach_the_script(node_root: Path) -> None:
    outcome = software_run(
        {
            "config": CONFIG,
            "server": {"type": "local"},
            "input_values": {"name": "x"},
            "action": "UPDATE",
        }
    )
    assert isinstance(outcome, Success)
    assert outcome.data["outputs"]["doubled"] == "2"
    assert outcome.data["deploy_stdout"] == "hello x from UPDATE\n"


def test_a_failing_script_is_heats_failed_deployment(node_root: Path) -> None:
    config = {"group": "script", "config": "#!/bin/sh\necho out\necho boom >&2\nexit 1\n"}
    outcome = software_run({"config": config, "server": {"type": "local"}})
    assert outcome == Failure(
        "Deployment to server failed: deploy_status_code : Deployment exited with "
        "non-zero status code: 1; stderr (tail): boom"
    )


def test_an_error_output_with_a_value_fails(node_root: Path) -> None:
    config = {
        "group": "script",
        "config": "#!/bin/sh\nprintf 'disk full' > \"$heat_outputs_path.err\"\n",
        "outputs": [{"name": "err", "error_output": True}],
    }
    outcome = software_run({"config": config, "server": {"type": "local"}})
    assert outcome == Failure("Deployment to server failed: err : disk full")


def test_the_timeout_input_bounds_the_run(node_root: Path) -> None:
    config = {"group": "script", "config": "#!/bin/sh\necho started\nsleep 30\n"}
    outcome = software_run({"config": config, "server": {"type": "local"}, "timeout": 0.5})
    assert isinstance(outcome, Failure)
    assert outcome.error.startswith(
        "Deployment to server failed: deploy_status_code : Deployment timed out after 0.5 s"
    )


def test_secret_inputs_never_show(node_root: Path) -> None:
    config = {
        "group": "script",
        "config": '#!/bin/sh\necho "pw=$db_password"\nprintf %s "$db_password" '
        '> "$heat_outputs_path.echo"\n',
        "inputs": [{"name": "db_password"}],
        "outputs": [{"name": "echo"}],
    }
    params = {
        "config": config,
        "server": {"type": "local"},
        "secret_input_values": {"db_password": "s3cr3t-value"},
    }
    outcome = software_run(params)
    assert outcome == Success(
        {
            "outputs": {"echo": "******"},
            "deploy_stdout": "pw=******\n",
            "deploy_stderr": "",
            "deploy_status_code": 0,
        }
    )
    failing = dict(config, config='#!/bin/sh\necho "bad $db_password" >&2\nexit 2\n')
    failed = software_run({**params, "config": failing}, ctx_of("ae-failing"))
    assert isinstance(failed, Failure)
    assert "s3cr3t-value" not in failed.error
    assert failed.error.endswith("stderr (tail): bad ******")
    assert RunSoftwareConfig.secret_params() == {"server", "secret_input_values"}


def test_the_same_action_execution_runs_once(node_root: Path, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    config = {"group": "script", "config": f"#!/bin/sh\necho x >> {counter}\necho ran\n"}
    params = {"config": config, "server": {"type": "local"}}
    first = software_run(params, ctx_of("ae-1"))
    again = software_run(params, ctx_of("ae-1"))  # the engine re-running it after a crash
    other = software_run(params, ctx_of("ae-2"))
    assert first == again == other
    assert isinstance(first, Success) and first.data["deploy_stdout"] == "ran\n"
    assert counter.read_text() == "x\nx\n"


def test_bad_input_fails_before_anything_runs(node_root: Path, tmp_path: Path) -> None:
    local = {"type": "local"}
    elsewhere = tmp_path / "elsewhere"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"config": CONFIG, "server": {"type": "vm"}}, "server.type: 'vm' is not a node type"),
        ({"config": CONFIG, "server": {"type": "local", "dir": "/"}}, "server: unknown key(s) dir"),
        (
            {"config": CONFIG, "server": {"type": "local", "sandbox": str(elsewhere)}},
            f"server.sandbox: {elsewhere} is not a node directory of the node root",
        ),
        ({"config": {"group": "nope"}, "server": local}, "config.group: no hook for config"),
        ({"config": {"inputs": "x"}, "server": local}, "config.inputs: must be a list of maps"),
        ({"config": CONFIG, "server": local, "action": "REBOOT"}, "action: must be one of"),
        ({"config": CONFIG, "server": {"host": "h"}}, "server.private_key: a private key"),
    ]
    for params, message in cases:
        outcome = software_run(params)
        assert isinstance(outcome, Failure), params
        assert outcome.error.startswith(message), outcome.error
    assert not elsewhere.exists()  # a sandbox outside the node root is never made
    assert not node_root.exists()  # nor anything else: every case failed first


def test_a_config_on_a_real_ssh_host(
    sshd_hosts: list[Any], ssh_keys: Path, known_hosts: Path, tmp_path: Path
) -> None:
    key = (ssh_keys / "client_key").read_text()
    sshd = sshd_hosts[0]
    server = {
        "host": sshd.address,
        "port": sshd.port,
        "user": getpass.getuser(),
        "private_key": key,
        "known_hosts": str(known_hosts),
        "workdir": str(tmp_path / "remote" / "convection"),
    }
    params = {"config": CONFIG, "server": server, "input_values": {"name": "ssh", "count": 5}}
    outcome = software_run(params)
    assert outcome == Success(
        {
            "outputs": {"doubled": "10", "who": "ssh"},
            "deploy_stdout": "hello ssh from CREATE\n",
            "deploy_stderr": "a warning\n",
            "deploy_status_code": 0,
        }
    )
    assert (tmp_path / "remote" / "convection" / "deployed").is_dir()
    # host_key pins exactly that key; a different one is refused, and no
    # error ever carries the key text.
    pinned = software_run(
        {**params, "server": {**server, "known_hosts": None, "host_key": _host_key(sshd)}},
        ctx_of("ae-pinned"),
    )
    assert isinstance(pinned, Success)
    other = _host_key(sshd_hosts[1])
    refused = software_run(
        {**params, "server": {**server, "known_hosts": None, "host_key": other}},
        ctx_of("ae-refused"),
    )
    assert isinstance(refused, Failure)
    assert refused.error.startswith("Deployment to server failed: node ")
    assert "HOST KEY MISMATCH" in refused.error
    broken = "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n"
    bad_key = software_run({**params, "server": {**server, "private_key": broken}})
    assert isinstance(bad_key, Failure)
    assert "could not be loaded" in bad_key.error
    assert "c2VjcmV0" not in bad_key.error


def _host_key(sshd: Any) -> str:
    """``ALGORITHM BASE64`` of one test host, from its known_hosts line."""
    return " ".join(sshd.known_hosts_line().split()[1:3])
