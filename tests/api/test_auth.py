"""Tokens end to end: ``convection token`` on a real SQLite store, the
server's startup log, and python-heatclient with a token."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from heatclient import exc
from heatclient.client import Client

from convection.cli.main import run
from convection.store.sql import SQLStore
from convection.tokens._tokens import Tokens

from .conftest import AuthServer, LiveServer, Settle

TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2018-08-31",
    "parameters": {"word": {"type": "string", "default": "hi"}},
    "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}}},
    "outputs": {"said": {"value": {"get_param": "word"}}},
}

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """``convection --db URL ARGS...`` in this process: (exit code, stdout, stderr)."""
    for name in list(os.environ):
        if name.startswith("CONVECTION_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CONVECTION_CONFIG", str(tmp_path / "absent.toml"))
    url = f"sqlite:///{tmp_path / 'tokens.db'}"

    def invoke(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = run(["--db", url, *args])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def _tokens(tmp_path: Path) -> Tokens:
    return Tokens(SQLStore(f"sqlite:///{tmp_path / 'tokens.db'}"))


def test_create_prints_the_secret_once_and_list_never(cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("token", "create", "--project", "web", "--role", "reader", "-f", "json")
    assert code == 0, err
    made = json.loads(out)
    assert made["secret"].startswith("cvt_")
    assert (made["project"], made["role"], made["scope"]) == ("web", "reader", "project")
    assert "cannot be shown again" in err

    found = _tokens(tmp_path).verify(made["secret"])
    assert found is not None and (found.id, found.role) == (made["id"], "reader")

    for fmt in ("json", "table", "yaml"):
        code, listed, _ = cli("token", "list", "-f", fmt)
        assert code == 0 and made["id"] in listed
        assert made["secret"] not in listed and found.secret_hash not in listed
    rows = json.loads(cli("token", "list", "-f", "json")[1])
    assert set(rows[0]) == {
        "id",
        "project",
        "role",
        "scope",
        "description",
        "created_at",
        "expires_at",
        "revoked_at",
    }
    assert json.loads(cli("token", "list", "--project", "other", "-f", "json")[1]) == []


def test_project_defaults_to_the_global_one(cli: Cli) -> None:
    code, out, _ = cli("--project", "ops", "token", "create", "-f", "json")
    assert code == 0 and json.loads(out)["project"] == "ops"


def test_expires_in(cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("token", "create", "--expires-in", "1d12h", "-f", "json")
    assert code == 0, err
    expires = datetime.fromisoformat(json.loads(out)["expires_at"])
    assert abs(expires - (datetime.now(UTC) + timedelta(hours=36))) < timedelta(minutes=1)
    for bad in ("5", "tomorrow", "0h", "-1d"):
        code, out, err = cli("token", "create", "--expires-in", bad)
        assert code == 1
        assert "--expires-in" in err and "Traceback" not in err
    assert len(_tokens(tmp_path).list()) == 1  # nothing made by the refused ones


def test_revoke(cli: Cli, tmp_path: Path) -> None:
    made = json.loads(cli("token", "create", "-f", "json")[1])
    code, out, _ = cli("token", "revoke", made["id"])
    assert code == 0 and made["id"] in out
    assert _tokens(tmp_path).verify(made["secret"]) is None
    assert json.loads(cli("token", "list", "-f", "json")[1])[0]["revoked_at"] is not None
    code, out, _ = cli("token", "revoke", made["id"])
    assert code == 0 and "already revoked" in out
    code, _, err = cli("token", "revoke", "no-such-id")
    assert code == 1 and "no-such-id" in err and "Traceback" not in err


def test_cli_tokens_work_against_the_running_server(
    auth_server: AuthServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``convection token`` in another process, on the server's store."""
    for name in list(os.environ):
        if name.startswith("CONVECTION_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CONVECTION_CONFIG", "/nonexistent/absent.toml")
    db = auth_server.live.db
    capsys.readouterr()
    assert run(["--db", db, "token", "create", "--project", "p-cli", "-f", "json"]) == 0
    made = json.loads(capsys.readouterr().out)
    stacks = auth_server.live.endpoint("p-cli") + "/stacks"
    headers = {"X-Auth-Token": made["secret"]}
    assert httpx.get(stacks, headers=headers).status_code == 200
    assert run(["--db", db, "token", "revoke", made["id"]]) == 0
    assert httpx.get(stacks, headers=headers).status_code == 401


def test_bad_role_is_a_usage_error(cli: Cli) -> None:
    code, _, err = cli("token", "create", "--role", "root")
    assert code == 1 and "--role" in err


def test_server_logs_its_mode_and_no_secret(auth_server: AuthServer, server: LiveServer) -> None:
    secret = auth_server.mint("p-log")
    logs = auth_server.live.logs()
    assert "token auth" in logs
    assert "no API tokens exist yet" in logs  # it started before any token was made
    assert secret not in logs and "cvt_" not in logs
    assert "no auth" in server.logs()


def test_heatclient_with_a_token(auth_server: AuthServer, settle: Settle) -> None:
    endpoint = auth_server.live.endpoint("p-heat")
    heat = Client("1", endpoint=endpoint, token=auth_server.mint("p-heat"))
    stack_id = heat.stacks.create(stack_name="tok", template=TEMPLATE)["stack"]["id"]
    assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"
    assert heat.stacks.output_show(stack_id, "said")["output"]["output_value"] == "hi"
    assert [s.stack_name for s in heat.stacks.list()] == ["tok"]
    heat.stacks.delete(stack_id)
    assert settle(heat, stack_id).stack_status == "DELETE_COMPLETE"

    with pytest.raises(exc.HTTPUnauthorized):
        list(Client("1", endpoint=endpoint, token="cvt_wrong").stacks.list())
    other = Client("1", endpoint=endpoint, token=auth_server.mint("p-other"))
    with pytest.raises(exc.HTTPForbidden):
        list(other.stacks.list())
