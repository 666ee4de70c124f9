"""``convection workflow|workbook|action validate`` and ``workflow graph``,
on definitions written as Mistral users write them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convection.cli.main import run

FIXTURES = Path(__file__).resolve().parents[1] / "workflows" / "lang" / "fixtures"

BROKEN = """\
version: '2.0'
deploy:
  tasks:
    install:
      action: std.noop
      on-success:
        - configure
        - cleanup
      retries: 3
    configure:
      action: std.echo output="<% $.host %>"
"""


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_valid_workflow_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys, "workflow", "validate", str(FIXTURES / "rolling_deploy.yaml"), "-f", "json"
    )
    assert code == 0
    assert json.loads(out) == {"valid": True, "error": None, "names": ["rolling_deploy"]}


def test_every_error_is_listed_with_its_place(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(BROKEN)
    code, out, err = cli(capsys, "workflow", "validate", str(path))
    assert code == 1
    assert f"{path}:8:11 deploy.tasks.install.on-success[1]: Task 'cleanup' not found." in err
    assert f"{path}:9:7 deploy.tasks.install.retries: Additional properties" in err
    assert "2 errors" in err
    code, out, _ = cli(capsys, "workflow", "validate", str(path), "-f", "json")
    body = json.loads(out)
    assert code == 1 and len(body["errors"]) == 2
    assert body["errors"][0]["path"] == "deploy.tasks.install.on-success[1]"


def test_workbooks_and_actions_validate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys, "workbook", "validate", str(FIXTURES / "sql_cluster_workbook.yaml"), "-f", "json"
    )
    assert code == 0 and json.loads(out)["valid"] is True
    code, out, _ = cli(
        capsys, "action", "validate", str(FIXTURES / "adhoc_actions.yaml"), "-f", "json"
    )
    assert code == 0 and json.loads(out)["names"]
    code, _, err = cli(capsys, "workbook", "validate", str(FIXTURES / "rolling_deploy.yaml"))
    assert code == 1 and "rolling_deploy.yaml" in err


def test_graph_draws_a_direct_workflows_transitions(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "rolling_deploy.yaml")
    code, out, _ = cli(capsys, "workflow", "graph", path, "-f", "json")
    graph = json.loads(out)
    assert code == 0 and graph["type"] == "direct" and graph["start"] == ["check_input"]
    kinds = {(e["from"], e["to"]): e["kind"] for e in graph["edges"]}
    assert kinds[("check_input", "report_failure")] == "error"
    code, dot, _ = cli(capsys, "workflow", "graph", path, "-f", "dot")
    assert code == 0 and dot.startswith('digraph "rolling_deploy"')
    assert '"check_input" -> "report_failure" [style=dashed, label="error"];' in dot
    code, mermaid, _ = cli(capsys, "workflow", "graph", path, "-f", "mermaid")
    assert code == 0 and mermaid.startswith("graph TD")
    assert '-.->|"error"|' in mermaid


def test_graph_draws_a_reverse_workflows_requires(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "murano_environment.yaml")
    code, out, _ = cli(capsys, "workflow", "graph", path, "-f", "json")
    assert code == 0, out
    graph = json.loads(out)
    assert graph["type"] == "reverse"
    assert graph["edges"] and all(e["kind"] == "requires" for e in graph["edges"])


def test_graph_of_a_file_with_several_workflows_needs_a_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(
        "version: '2.0'\none:\n  tasks: {a: {action: std.noop}}\n"
        "two:\n  tasks: {b: {action: std.noop}}\n"
    )
    code, _, err = cli(capsys, "workflow", "graph", str(path))
    assert code == 1 and "holds 2 workflows (one, two): name one with --workflow" in err
    code, out, _ = cli(capsys, "workflow", "graph", str(path), "-w", "two", "-f", "json")
    assert code == 0 and json.loads(out)["nodes"] == ["b"]


def test_action_list_and_show_read_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "action", "list", "-f", "json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and {"std.noop", "std.http", "convection.stack.create"} <= set(rows)
    assert rows["std.echo"]["input"] == "output, delay=0"  # Mistral's get_arg_list_as_str
    code, out, _ = cli(capsys, "action", "show", "std.email", "-f", "json")
    params = json.loads(out)["parameters"]
    assert code == 0 and params["smtp_password"]["secret"] is True
    assert params["to_addrs"]["required"] is True
    code, _, err = cli(capsys, "action", "show", "std.ech")
    assert code == 1 and "did you mean std.echo?" in err
