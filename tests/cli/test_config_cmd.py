"""``convection config show``: every setting, its value, and where it came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from convection.cli.main import run


def show(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert run([*args, "config", "show", "-f", "json"]) == 0, capsys.readouterr().err
    body: dict[str, Any] = json.loads(capsys.readouterr().out)
    return body


def test_each_layer_is_named_as_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "convection.toml"
    config.write_text('concurrency = 8\nproject = "from-file"\nstack_timeout_mins = 5\n')
    monkeypatch.setenv("CONVECTION_PROJECT", "from-env")
    monkeypatch.setenv("CONVECTION_STACK_TIMEOUT_MINS", "7")
    db = f"sqlite:///{tmp_path / 'flag.db'}"
    body = show(capsys, "--config", str(config), "--db", db, "--project", "from-flag")
    assert body["concurrency"] == {
        "value": 8,
        "source": f"file:{config}",
        "description": "Resources worked on at once, per engine.",
    }
    assert body["stack_timeout_mins"]["value"] == 7
    assert body["stack_timeout_mins"]["source"] == "env:CONVECTION_STACK_TIMEOUT_MINS"
    assert body["project"] == {
        "value": "from-flag",
        "source": "flag",
        "description": "Project that scopes stack names.",
    }
    assert body["db"]["value"] == db and body["db"]["source"] == "flag"
    assert body["engine_lease_seconds"]["source"] == "default"
    assert not (tmp_path / "flag.db").exists()  # showing settings opens no store


def test_defaults_and_the_config_file_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body = show(capsys)
    assert body["project"]["value"] == "default"
    assert body["db"]["value"].startswith("sqlite:///") and body["db"]["source"] == "default"
    config = tmp_path / "env.toml"
    config.write_text('project = "team"\n')
    monkeypatch.setenv("CONVECTION_CONFIG", str(config))
    assert show(capsys)["project"] == {
        "value": "team",
        "source": f"file:{config}",
        "description": "Project that scopes stack names.",
    }


def test_table_and_a_masked_password(capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["--db", "postgresql://admin:s3cret@db.example/heat", "config", "show"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Setting" in out and "Source" in out and "flag" in out
    assert "s3cret" not in out and "postgresql://admin:***@db.example/heat" in out


def test_bad_configuration_is_a_user_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--config", str(tmp_path / "missing.toml"), "config", "show"]) == 1
    bad = tmp_path / "bad.toml"
    bad.write_text("colour = 'red'\n")
    assert run(["--config", str(bad), "config", "show"]) == 1
    monkeypatch.setenv("CONVECTION_CONCURRENCY", "many")
    assert run(["config", "show"]) == 1
    err = capsys.readouterr().err
    assert "does not exist" in err and "unknown option(s) colour" in err
    assert "env:CONVECTION_CONCURRENCY" in err
    assert "Traceback" not in err
