"""std.ssh on the real sshd hosts of tests/software, through the software
SSH transport (keys only, verified host keys)."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any

import pytest

from convection.workflows import Failure, Success, default_registry

from .conftest import CTX, run


@pytest.fixture
def base(sshd_hosts: list[Any], ssh_keys: Path, known_hosts: Path, tmp_path: Path) -> Any:
    def params(index: int = 0, **extra: Any) -> dict[str, Any]:
        sshd = sshd_hosts[index]
        values = {
            "host": sshd.address,
            "port": sshd.port,
            "username": getpass.getuser(),
            "private_key_filename": str(ssh_keys / "client_key"),
            "known_hosts": str(known_hosts),
            "workdir": str(tmp_path / "remote" / "convection"),
        }
        values.update(extra)
        return values

    return params


def ssh(params: dict[str, Any]) -> Any:
    return run(default_registry().lookup("std.ssh")().run(CTX, params))


def test_stdout_is_the_result(base: Any) -> None:
    assert ssh(base(cmd="echo hello; echo warn >&2")) == Success("hello\n")


def test_a_list_of_hosts_gives_a_list(base: Any, sshd_hosts: list[Any]) -> None:
    hosts = [h.address for h in sshd_hosts]
    # both sshd share no port, so run the list on one host, twice
    params = base(cmd="printf %s $((6*7))", host=[hosts[0], hosts[0]])
    assert ssh(params) == Success(["42", "42"])
    assert ssh(base(cmd="echo one", host=[hosts[0]])) == Success("one\n")  # Mistral: one is one


def test_non_zero_exit_fails_in_mistrals_words(base: Any) -> None:
    outcome = ssh(base(cmd="echo out; exit 3"))
    host = base()["host"]
    assert outcome == Failure(f"Failed to execute ssh cmd 'echo out; exit 3' on ['{host}']")


def test_return_result_on_error(base: Any) -> None:
    outcome = ssh(base(cmd="echo out; echo err >&2; exit 3", return_result_on_error=True))
    assert outcome == Success({"stdout": "out\n", "stderr": "err\n", "exit_code": 3})


def test_key_text_is_a_secret(base: Any, ssh_keys: Path, tmp_path: Path) -> None:
    key = (ssh_keys / "client_key").read_text()
    assert ssh(base(cmd="echo k", private_key=key, private_key_filename=None)) == Success("k\n")
    broken = "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n"
    outcome = ssh(base(cmd="true", private_key=broken, private_key_filename=None))
    assert isinstance(outcome, Failure)
    assert "could not be loaded" in outcome.error
    assert "c2VjcmV0" not in outcome.error


def test_password_auth_and_dotdot_are_refused(base: Any) -> None:
    outcome = ssh(base(cmd="true", private_key_filename=None, password="pw"))
    assert isinstance(outcome, Failure)
    assert "password authentication is not supported" in outcome.error
    assert "pw" not in outcome.error.replace("password", "")
    dotdot = ssh(base(cmd="true", private_key_filename="../etc/key"))
    assert isinstance(dotdot, Failure)
    assert dotdot.error.endswith("Private key filename must not contain '..'. Actual: ../etc/key")


def test_relative_key_names_are_in_the_key_dir(
    base: Any, ssh_keys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVECTION_SSH_KEY_DIR", str(ssh_keys))
    assert ssh(base(cmd="echo rel", private_key_filename="client_key")) == Success("rel\n")


def test_an_unknown_host_key_is_refused(base: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    outcome = ssh(base(cmd="true", known_hosts=str(empty)))
    assert isinstance(outcome, Failure)
    assert outcome.error.startswith("Failed to execute ssh cmd 'true' on ")
    assert "host key not verifiable" in outcome.error
