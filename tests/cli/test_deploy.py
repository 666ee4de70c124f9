"""``convection deploy``: create or update, wait, print the outputs; and the demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convection.cli import demo
from convection.cli.main import run

HELLO = Path(__file__).parents[2] / "examples" / "hello"
HELLO_FILES = ["-t", str(HELLO / "template.yaml"), "-e", str(HELLO / "env.yaml")]

SIMPLE = """\
heat_template_version: 2021-04-16
parameters:
  greeting: {type: string, default: hi}
resources:
  a:
    type: OS::Heat::Value
    properties: {value: {get_param: greeting}}
  b:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [a, value]}}
outputs:
  greeting: {value: {get_attr: [b, output]}}
"""

#: Longest a test may run before it is failed (a hung engine, say).


def deploy(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str, str]:
    code = run(["--db", db, "deploy", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def stack_status(capsys: pytest.CaptureFixture[str], db: str, name: str) -> str:
    assert run(["--db", db, "stack", "show", name, "-f", "json"]) == 0
    return str(json.loads(capsys.readouterr().out)["stack_status"])


def test_deploy_creates_then_updates_hello(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, out, err = deploy(capsys, db, *HELLO_FILES, "hello")
    assert code == 0, err
    assert "Stack hello CREATE_COMPLETE" in out
    assert "Output" in out and "shop.a.internal" in out  # the outputs table
    code, out, err = deploy(
        capsys, db, *HELLO_FILES, "--parameter", "app_name=store", "hello", "-f", "json"
    )
    assert code == 0, err
    assert "Stack hello UPDATE_COMPLETE" in err  # progress is on stderr with -f json
    outputs = {o["output_key"]: o["output_value"] for o in json.loads(out)}
    assert outputs["hosts"] == ["store.a.internal", "store.b.internal", "store.c.internal"]
    assert stack_status(capsys, db, "hello") == "UPDATE_COMPLETE"


def test_deploy_simple_stack_and_dry_run(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    template = tmp_path / "simple.yaml"
    template.write_text(SIMPLE)
    code, out, _ = deploy(capsys, db, "-t", str(template), "s", "--dry-run", "-f", "json")
    assert code == 0
    assert len(json.loads(out)["resource_changes"]["added"]) == 2
    assert run(["--db", db, "stack", "show", "s"]) == 1  # a dry run creates nothing
    capsys.readouterr()
    code, out, err = deploy(capsys, db, "-t", str(template), "s")
    assert code == 0, err
    assert "greeting" in out and "hi" in out
    args = ("-t", str(template), "--parameter", "greeting=yo", "s")
    code, out, _ = deploy(capsys, db, *args, "--dry-run")
    assert code == 0 and "Plan: 0 to add, 2 to update" in out
    code, out, err = deploy(capsys, db, *args, "-f", "yaml")
    assert code == 0, err
    assert "output_value: yo" in out


def test_deploy_failure_exits_1_without_outputs(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    template = tmp_path / "failing.yaml"
    template.write_text(
        "heat_template_version: 2021-04-16\n"
        "resources:\n  bad: {type: OS::Heat::TestResource, properties: {fail: true}}\n"
        "outputs:\n  x: {value: 1}\n"
    )
    code, out, err = deploy(capsys, db, "-t", str(template), "f")
    assert code == 1
    assert "CREATE_FAILED" in out and "Output" not in out
    assert "Test Resource failed bad" in err
    missing = deploy(capsys, db, "-t", str(tmp_path / "nope.yaml"), "g")
    assert missing[0] == 1 and "nope.yaml" in missing[2]


def test_demo_deploys_hello_on_its_own_store(capsys: pytest.CaptureFixture[str], db: str) -> None:
    assert demo.deploy_hello(db) == 0
    out = capsys.readouterr().out
    assert "Stack hello CREATE_COMPLETE" in out and "Stack hello UPDATE_COMPLETE" in out
    assert f"--db {db}" in out
    fresh = demo.demo_db()
    assert fresh.startswith("sqlite:///") and not Path(fresh.removeprefix("sqlite:///")).exists()
