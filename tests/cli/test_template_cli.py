"""``convection template ...`` as a user runs it: exit codes, output shapes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from convection.cli.main import run

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
HELLO = ROOT / "examples" / "hello"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_prints_heats_validate_body_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys,
        "template",
        "validate",
        "-t",
        str(HELLO / "template.yaml"),
        "-e",
        str(HELLO / "env.yaml"),
        "--parameter",
        "app_name=web",
        "-f",
        "json",
    )
    assert code == 0
    body = json.loads(out)
    assert set(body) == {"Description", "Parameters", "Environment"}
    assert body["Parameters"]["environment"]["Value"] == "prod"  # from env.yaml
    assert body["Parameters"]["app_name"]["Value"] == "web"
    assert body["Parameters"]["replicas"]["Default"] == 3  # parameter_defaults
    assert body["Parameters"]["zones"]["Type"] == "CommaDelimitedList"


def test_validate_lists_every_error_with_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "heat_template_version: 2016-10-14\n"
        "resources:\n"
        "  web:\n"
        "    type: OS::Heat::Value\n"
        "    properties:\n"
        "      value: {get_param: image}\n"
        "  db:\n"
        "    type: OS::Heat::Valeu\n"
    )
    code, out, err = cli(capsys, "template", "validate", "-t", str(bad))
    assert code == 1
    assert out == ""
    assert f"{bad}:6:7 resources.web.properties.value: The Parameter (image)" in err
    assert f"{bad}:8:5 resources.db.type: The Resource Type (OS::Heat::Valeu)" in err
    assert "did you mean OS::Heat::Value?" in err.replace("Did", "did")
    assert "2 errors" in err


def test_validate_errors_as_json_for_scripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("heat_template_version: 2016-10-14\nresources:\n  a: {type: Nope::Nope}\n")
    code, out, _ = cli(capsys, "template", "validate", "-t", str(bad), "-f", "json")
    assert code == 1
    body = json.loads(out)
    (error,) = body["errors"]
    assert error["line"] == 3 and error["path"] == "resources.a.type"


def test_missing_file_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "template", "validate", "-t", str(tmp_path / "nope.yaml"))
    assert code == 1
    assert "nope.yaml" in err


def test_bad_usage_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "template", "validate")[0] == 1
    assert cli(capsys, "template", "frobnicate")[0] == 1


def test_graph_json_leaves_out_disabled_resources(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys,
        "template",
        "graph",
        "-t",
        str(FIXTURES / "multienv/app.yaml"),
        "-e",
        str(FIXTURES / "multienv/env_dev.yaml"),
        "--format",
        "json",
    )
    assert code == 0
    graph = json.loads(out)
    assert sorted(graph["nodes"]) == ["app_secret", "settings"]
    assert graph["edges"] == []


def test_graph_dot_and_mermaid(capsys: pytest.CaptureFixture[str]) -> None:
    code, dot, _ = cli(capsys, "template", "graph", "-t", str(FIXTURES / "lamp_network.yaml"))
    assert code == 0 and dot.startswith("digraph")
    assert '"web_server" -> "db_server"' in dot
    code, mermaid, _ = cli(
        capsys, "template", "graph", "-t", str(FIXTURES / "lamp_network.yaml"), "-f", "mermaid"
    )
    assert code == 0 and mermaid.startswith("graph TD")


def test_version_and_function_lists(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "template", "version", "list", "-f", "json")
    versions = json.loads(out)
    assert code == 0 and len(versions) == 13
    cfn = {"version": "AWSTemplateFormatVersion.2010-09-09", "type": "cfn", "aliases": []}
    assert cfn in versions
    assert {
        "version": "heat_template_version.2016-10-14",
        "type": "hot",
        "aliases": ["newton"],
    } in versions
    code, out, _ = cli(
        capsys, "template", "function", "list", "heat_template_version.2015-10-15", "-f", "json"
    )
    names = {f["functions"] for f in json.loads(out)}
    assert code == 0 and "str_split" in names and "map_merge" not in names
    assert cli(capsys, "template", "function", "list", "2099-01-01")[0] == 1
    code, out, _ = cli(
        capsys, "template", "function", "list", "HeatTemplateFormatVersion.2012-12-12", "-f", "json"
    )
    names = {f["functions"] for f in json.loads(out)}
    assert code == 0 and "Fn::FindInMap" in names and "Fn::If" not in names


def test_console_script_runs_as_a_real_process() -> None:
    exe = Path(sys.executable).with_name("convection")
    done = subprocess.run(
        [str(exe), "template", "validate", "-t", str(HELLO / "template.yaml"), "-f", "yaml"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Parameters:" in done.stdout
    assert "Traceback" not in done.stderr
