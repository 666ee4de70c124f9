"""Hidden parameters given to a deployment never show: not in the failure
reason (events, stack status), not in ``deploy_stdout``/``deploy_stderr``
as the CLI shows them, not in the log.

The stacks run through the real CLI (``--wait`` runs the embedded engine in
this process) on an SQLite file, on a real local node.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from convection.cli.main import run
from convection.convergence.context import hidden_texts
from convection.hot.parameters import ParameterValues
from convection.store.sql import SQLStore

SECRET = "s3cr3t-Pa55w0rd-xyzzy"

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  db_password: {type: string, hidden: true}
  exit_code: {type: number, default: 0}
resources:
  node: {type: Convection::Local::Node}
  setup:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs: [{name: password}, {name: code}]
      outputs: [{name: done}]
      config: |
        #!/bin/sh
        echo "connecting with password $password"
        echo "error: password $password was refused" >&2
        printf yes > "$heat_outputs_path.done"
        exit "$code"
  deploy:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: setup}
      server: {get_resource: node}
      input_values:
        password: {get_param: db_password}
        code: {get_param: exit_code}
outputs:
  stdout: {value: {get_attr: [deploy, deploy_stdout]}}
  stderr: {value: {get_attr: [deploy, deploy_stderr]}}
"""


@pytest.fixture
def cli(tmp_path: Path, node_root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Path]:
    """``--db`` for a private store, and the template file; no user settings."""
    for name in list(os.environ):
        if name.startswith("CONVECTION_") and name != "CONVECTION_NODE_ROOT":
            monkeypatch.delenv(name)
    monkeypatch.setenv("CONVECTION_CONFIG", str(tmp_path / "absent.toml"))
    template = tmp_path / "template.yaml"
    template.write_text(TEMPLATE)
    return ["--db", f"sqlite:///{tmp_path / 'stacks.db'}"], template


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def test_failed_run_shows_no_hidden_value(
    cli: tuple[list[str], Path],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    db, template = cli
    caplog.set_level(logging.DEBUG)
    params = ["--parameter", f"db_password={SECRET}", "--parameter", "exit_code=3"]
    code, shown = _run(capsys, *db, "stack", "create", "s", "-t", str(template), *params, "--wait")
    assert code != 0 and "CREATE_FAILED" in shown
    _, events = _run(capsys, *db, "stack", "event", "list", "s", "-f", "json")
    _, stack = _run(capsys, *db, "stack", "show", "s", "-f", "json")
    _, resource = _run(capsys, *db, "stack", "resource", "show", "s", "deploy", "-f", "json")
    everything = shown + events + stack + resource + caplog.text
    # the run did happen and its text is shown, with the value masked
    assert "non-zero status code: 3" in events
    assert "error: password ****** was refused" in events
    assert SECRET not in everything
    # what the failed resource keeps for its attributes is masked too
    store = SQLStore(db[1])
    try:
        stack_row = store.get_stack("default", "s")
        assert stack_row is not None
        (row,) = [r for r in store.list_resources(stack_row.id) if r.name == "deploy"]
        outputs = row.data["last"]["outputs"]  # type: ignore[index,call-overload]
        assert outputs["deploy_stdout"] == "connecting with password ******\n"
        assert outputs["deploy_stderr"] == "error: password ****** was refused\n"
    finally:
        store.close()


def test_completed_run_outputs_show_no_hidden_value(
    cli: tuple[list[str], Path],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    db, template = cli
    caplog.set_level(logging.DEBUG)
    params = ["--parameter", f"db_password={SECRET}"]
    code, shown = _run(capsys, *db, "stack", "create", "s", "-t", str(template), *params, "--wait")
    assert code == 0, shown
    code, outputs = _run(capsys, *db, "stack", "output", "show", "s", "--all", "-f", "json")
    assert code == 0, outputs
    _, resource = _run(capsys, *db, "stack", "resource", "show", "s", "deploy", "-f", "json")
    _, events = _run(capsys, *db, "stack", "event", "list", "s", "-f", "json")
    assert "connecting with password ******" in outputs
    assert "error: password ****** was refused" in outputs
    assert "connecting with password ******" in resource
    assert SECRET not in shown + outputs + resource + events + caplog.text


def test_hidden_texts_are_the_values_a_script_could_print() -> None:
    params = ParameterValues(
        {"pw": "p4ss", "pin": 4242, "keys": ["k1", "k2"], "name": "public", "empty": ""},
        hidden=("pw", "pin", "keys", "empty"),
    )
    texts = hidden_texts(params)
    assert {"p4ss", "4242", "k1", "k2", '["k1", "k2"]'} <= set(texts)
    assert "public" not in texts and "" not in texts
