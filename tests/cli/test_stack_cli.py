"""``convection stack ...`` as a user runs it, on a real SQLite file.

Commands run in-process through ``convection.cli.main.run`` (stdout and
stderr captured); a few run the installed console script as a real process.
``--wait`` runs the embedded engine in the command's own process.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from convection.cli.context import Invocation
from convection.cli.main import run
from convection.cli.progress import Target, wait_for

ROOT = Path(__file__).parents[2]
HELLO = ROOT / "examples" / "hello"
EXE = Path(sys.executable).with_name("convection")

SIMPLE = """\
heat_template_version: 2021-04-16
description: A value, a test resource that copies it, and a gate.
parameters:
  greeting: {type: string, default: hi}
resources:
  a:
    type: OS::Heat::Value
    properties: {value: {get_param: greeting}}
  b:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [a, value]}}
  c:
    type: OS::Heat::None
    depends_on: [b]
outputs:
  out:
    description: what b stored
    value: {get_attr: [b, output]}
  project:
    value: {get_param: "OS::project_id"}
"""

FAILING = """\
heat_template_version: 2021-04-16
resources:
  ok: {type: OS::Heat::None}
  bad:
    type: OS::Heat::TestResource
    properties: {fail: true}
    depends_on: [ok]
"""


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self.err
        return json.loads(self.out)


class Cli:
    """``convection --db <tmp sqlite> ...`` in this process."""

    def __init__(self, capsys: pytest.CaptureFixture[str], db: str) -> None:
        self.capsys = capsys
        self.db = db

    def __call__(self, *args: str) -> Result:
        code = run(["--db", self.db, *args])
        out, err = self.capsys.readouterr()
        assert "Traceback" not in err
        return Result(code, out, err)

    def ok(self, *args: str) -> Result:
        result = self(*args)
        assert result.code == 0, result.err
        return result


#: Longest a test may run before it is failed (a hung engine, say).


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db: str) -> Cli:
    return Cli(capsys, db)


@pytest.fixture
def simple(tmp_path: Path) -> str:
    path = tmp_path / "simple.yaml"
    path.write_text(SIMPLE)
    return str(path)


@pytest.fixture
def hello(cli: Cli) -> Iterator[None]:
    cli.ok("stack", "create", *hello_files(), "hello", "--wait")
    yield


def hello_files() -> list[str]:
    return ["-t", str(HELLO / "template.yaml"), "-e", str(HELLO / "env.yaml")]


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# -- create and the read commands -------------------------------------------------


def test_create_wait_deploys_hello_and_shows_its_outputs(cli: Cli) -> None:
    done = cli("stack", "create", *hello_files(), "hello", "--wait")
    assert done.code == 0, done.err
    assert "[admin_password]: CREATE_COMPLETE" in done.out  # plain event lines (not a tty)
    assert "Stack hello CREATE_COMPLETE" in done.out
    assert "shop.a.internal" in done.out  # the outputs, in the final table
    body = cli("stack", "show", "hello", "-f", "json").json()
    assert body["stack_status"] == "CREATE_COMPLETE"
    assert body["stack_status_reason"] == "Stack CREATE completed successfully"
    outputs = {o["output_key"]: o for o in body["outputs"]}
    assert outputs["hosts"]["output_value"] == [
        "shop.a.internal",
        "shop.b.internal",
        "shop.c.internal",
    ]
    assert outputs["config"]["description"] == "The rendered application config"
    assert outputs["config"]["output_value"]["replicas"] == 3  # parameter_defaults


def test_json_output_of_a_waited_create_is_pure_json(cli: Cli, simple: str) -> None:
    done = cli("stack", "create", "-t", simple, "s", "--wait", "-f", "json")
    body = done.json()  # progress went to stderr
    assert body["stack_status"] == "CREATE_COMPLETE"
    assert "[b]: CREATE_COMPLETE" in done.err
    assert {"output_key": "out", "output_value": "hi", "description": "what b stored"} in body[
        "outputs"
    ]


def test_create_without_wait_records_the_operation_and_returns(cli: Cli, simple: str) -> None:
    body = cli("stack", "create", "-t", simple, "s", "-f", "json").json()
    assert body["stack_status"] == "CREATE_IN_PROGRESS"
    assert body["stack_name"] == "s" and body["id"]
    waited = cli("stack", "wait", "s", "-f", "json").json()
    assert waited[0]["stack_status"] == "CREATE_COMPLETE"


def test_reads_in_every_format(cli: Cli, hello: None) -> None:
    listed = cli("stack", "list", "-f", "json").json()
    assert [s["stack_name"] for s in listed] == ["hello"]
    assert {"id", "stack_name", "stack_status", "creation_time", "updated_time"} <= set(listed[0])
    assert yaml.safe_load(cli.ok("stack", "list", "-f", "yaml").out) == listed
    table = cli.ok("stack", "list").out
    for column in ("ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time"):
        assert column in table
    assert listed[0]["id"] in table  # never cut, even into a pipe

    shown = cli("stack", "show", "hello", "-f", "json").json()
    assert shown["parameters"]["environment"] == "prod"
    assert yaml.safe_load(cli.ok("stack", "show", "hello", "-f", "yaml").out) == shown
    assert "stack_status_reason" in cli.ok("stack", "show", "hello").out

    resources = {
        r["resource_name"]: r
        for r in cli("stack", "resource", "list", "hello", "-f", "json").json()
    }
    assert set(resources) == {"admin_password", "app_config", "ready"}
    password = resources["admin_password"]
    assert password["resource_type"] == "OS::Heat::RandomString"
    assert password["resource_status"] == "CREATE_COMPLETE"
    assert password["physical_resource_id"]
    assert password["required_by"] == ["ready"]
    table = cli.ok("stack", "resource", "list", "hello").out
    assert "resource_name" in table and "physical_resource_id" in table and "app_config" in table
    raw = cli.ok("stack", "resource", "list", "hello", "-f", "yaml").out
    assert len(yaml.safe_load(raw)) == 3

    detail = cli("stack", "resource", "show", "hello", "admin_password", "-f", "json").json()
    value = detail["attributes"]["value"]  # shown, as Heat shows it
    assert isinstance(value, str) and value and value != "******"
    assert "resource_status_reason" in cli.ok("stack", "resource", "show", "hello", "ready").out

    events = cli("stack", "event", "list", "hello", "-f", "json").json()
    assert events[0]["resource_name"] == "hello"
    assert events[0]["resource_status"] == "CREATE_IN_PROGRESS"
    assert {"id", "event_time", "resource_status_reason", "physical_resource_id"} <= set(events[0])
    assert yaml.safe_load(cli.ok("stack", "event", "list", "hello", "-f", "yaml").out) == events
    assert "resource_status_reason" in cli.ok("stack", "event", "list", "hello", "-f", "table").out
    log = cli.ok("stack", "event", "list", "hello").out  # heatclient's default: the log
    assert "[hello]: CREATE_COMPLETE  Stack CREATE completed successfully" in log

    outputs = cli("stack", "output", "list", "hello", "-f", "json").json()
    assert {o["output_key"] for o in outputs} == {"config", "hosts"}
    assert "output_key" in cli.ok("stack", "output", "list", "hello").out
    one = cli("stack", "output", "show", "hello", "hosts", "-f", "yaml").out
    assert yaml.safe_load(one)["output_value"][0] == "shop.a.internal"
    assert "shop.b.internal" in cli.ok("stack", "output", "show", "hello", "--all").out
    assert cli("stack", "output", "show", "hello").code == 1  # neither OUTPUT nor --all


def test_event_list_filters_and_follow(cli: Cli, simple: str) -> None:
    cli.ok("stack", "create", "-t", simple, "s", "--wait")
    only_b = cli("stack", "event", "list", "s", "--resource", "b", "-f", "json").json()
    assert {e["resource_name"] for e in only_b} == {"b"}
    assert len(cli("stack", "event", "list", "s", "--limit", "2", "-f", "json").json()) == 2
    followed = cli("stack", "event", "list", "s", "--follow")  # settled: prints, then ends
    assert followed.code == 0
    assert "[s]: CREATE_COMPLETE" in followed.out
    assert cli("stack", "event", "list", "s", "--follow", "-f", "json").code == 1


def test_resource_list_filters(cli: Cli, simple: str) -> None:
    cli.ok("stack", "create", "-t", simple, "s", "--wait")
    found = cli("stack", "resource", "list", "s", "--filter", "type=OS::Heat::None", "-f", "json")
    assert [r["resource_name"] for r in found.json()] == ["c"]
    by_status = cli("stack", "resource", "list", "s", "--filter", "status=COMPLETE", "-f", "json")
    assert len(by_status.json()) == 3
    assert cli("stack", "resource", "list", "s", "--filter", "colour=red").code == 1


def test_template_show(cli: Cli, simple: str) -> None:
    cli.ok("stack", "create", "-t", simple, "s")
    shown = yaml.safe_load(cli.ok("stack", "template", "show", "s").out)
    assert shown["resources"]["c"]["depends_on"] == ["b"]
    assert cli("stack", "template", "show", "s", "-f", "json").json()["parameters"]


def test_live_progress_on_a_terminal(cli: Cli, simple: str, db: str) -> None:
    body = cli("stack", "create", "-t", simple, "s", "-f", "json").json()
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=100)
    inv = Invocation(flags={"db": db})
    try:
        result = wait_for(
            inv.stacks, inv.project, [Target(body["id"], "s", "CREATE_COMPLETE")], terminal
        )
    finally:
        inv.close()
    assert result.exit_code() == 0
    assert "CREATE_COMPLETE" in screen.getvalue()
    assert "Stack s" in screen.getvalue()


# -- update and preview -------------------------------------------------------------


def test_update_existing_with_a_parameter_change(cli: Cli, simple: str) -> None:
    cli.ok("stack", "create", "-t", simple, "s", "--wait")
    done = cli("stack", "update", "s", "--existing", "--parameter", "greeting=yo", "--wait")
    assert done.code == 0, done.err
    assert "Stack s UPDATE_COMPLETE" in done.out
    assert cli("stack", "output", "show", "s", "out", "-f", "json").json()["output_value"] == "yo"
    assert cli("stack", "show", "s", "-f", "json").json()["parameters"]["greeting"] == "yo"
    cleared = cli("stack", "update", "s", "--existing", "--clear-parameter", "greeting", "--wait")
    assert cleared.code == 0, cleared.err
    assert cli("stack", "output", "show", "s", "out", "-f", "json").json()["output_value"] == "hi"
    full = cli("stack", "update", "s", "-t", simple, "--parameter", "greeting=hey", "--wait")
    assert full.code == 0, full.err
    assert cli("stack", "output", "show", "s", "out", "-f", "json").json()["output_value"] == "hey"
    assert cli("stack", "update", "s").code == 1  # neither -t nor --existing


def test_preview_and_dry_run(cli: Cli, simple: str) -> None:
    planned = cli("stack", "create", "-t", simple, "s", "--dry-run", "-f", "json").json()
    added = planned["resource_changes"]["added"]
    assert sorted(r["resource_name"] for r in added) == ["a", "b", "c"]
    assert cli("stack", "list", "-f", "json").json() == []  # nothing was created
    table = cli.ok("stack", "preview", "s", "-t", simple).out
    assert "Plan: 3 to add, 0 to update, 0 to replace, 0 to delete, 0 unchanged." in table

    cli.ok("stack", "create", "-t", simple, "s", "--wait")
    args = ("-t", simple, "--parameter", "greeting=yo")
    dry = cli("stack", "update", "s", *args, "--dry-run", "-f", "json").json()["resource_changes"]
    assert dry["updated"][0]["resource_name"] == "a"
    assert dry["added"] == [] and dry["deleted"] == []
    preview = cli("stack", "preview", "s", *args, "-f", "json").json()["resource_changes"]
    assert preview == dry
    assert cli("stack", "show", "s", "-f", "json").json()["parameters"]["greeting"] == "hi"


# -- delete, cancel, check, suspend, resume --------------------------------------------


def test_delete_with_yes_and_without_a_terminal(cli: Cli, simple: str) -> None:
    first = cli("stack", "create", "-t", simple, "one", "-f", "json").json()
    second = cli("stack", "create", "-t", simple, "two", "-f", "json").json()
    done = cli("stack", "delete", "-y", "one", "--wait")
    assert done.code == 0, done.err
    assert "Stack one DELETE_COMPLETE" in done.out
    assert (
        cli("stack", "show", first["id"], "-f", "json").json()["stack_status"] == "DELETE_COMPLETE"
    )
    assert cli("stack", "show", "one").code == 1  # by name, only live stacks
    assert cli.ok("stack", "delete", "two").out == ""  # stdin is not a terminal: no prompt
    cli.ok("stack", "wait", second["id"])
    assert cli("stack", "list", "-f", "json").json() == []
    deleted = cli("stack", "list", "--deleted", "-f", "json").json()
    assert {s["stack_name"] for s in deleted} == {"one", "two"}
    missing = cli("stack", "delete", "-y", "nope")
    assert missing.code == 1 and "Stack not found: nope" in missing.err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_delete_asks_on_a_terminal(cli: Cli, simple: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cli.ok("stack", "create", "-t", simple, "s")
    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    refused = cli("stack", "delete", "s")
    assert refused.code == 1
    assert "[y/N]" in refused.out
    assert cli("stack", "show", "s", "-f", "json").json()["stack_status"] == "CREATE_IN_PROGRESS"
    monkeypatch.setattr(sys, "stdin", _Terminal("y\n"))
    assert cli("stack", "delete", "s", "--wait").code == 0


def test_cancel_rolls_an_update_back(cli: Cli, simple: str) -> None:
    cli.ok("stack", "create", "-t", simple, "s", "--wait")
    assert cli("stack", "cancel", "s").code == 1  # nothing in progress
    cli.ok("stack", "update", "s", "--existing", "--parameter", "greeting=yo")
    rows = cli("stack", "cancel", "s", "--wait", "-f", "json").json()
    assert rows[0]["stack_status"] == "ROLLBACK_COMPLETE"
    assert cli("stack", "output", "show", "s", "out", "-f", "json").json()["output_value"] == "hi"
    cli.ok("stack", "update", "s", "--existing", "--parameter", "greeting=yo")
    stopped = cli("stack", "cancel", "s", "--no-rollback", "-f", "json").json()
    assert stopped[0]["stack_status"] == "UPDATE_FAILED"
    assert stopped[0]["stack_status_reason"] == "Stack UPDATE cancelled"


def test_check_suspend_resume(cli: Cli, simple: str) -> None:
    cli.ok("stack", "create", "-t", simple, "s", "--wait")
    checked = cli("stack", "check", "s", "--wait", "-f", "json").json()
    assert checked[0]["stack_status"] == "CHECK_COMPLETE"
    assert "Stack Status" in cli.ok("stack", "suspend", "s", "--wait").out
    assert cli("stack", "show", "s", "-f", "json").json()["stack_status"] == "SUSPEND_COMPLETE"
    refused = cli("stack", "update", "s", "--existing")
    assert refused.code == 1 and "suspended" in refused.err
    resumed = cli("stack", "resume", "s", "--wait", "-f", "yaml")
    assert yaml.safe_load(resumed.out)[0]["stack_status"] == "RESUME_COMPLETE"


def test_mark_unhealthy_and_signal(cli: Cli, simple: str, tmp_path: Path) -> None:
    cli.ok("stack", "create", "-t", simple, "s", "--wait")
    cli.ok("stack", "resource", "mark-unhealthy", "s", "b", "disk gone")
    shown = cli("stack", "resource", "show", "s", "b", "-f", "json").json()
    assert shown["resource_status"] == "CHECK_FAILED"
    assert shown["resource_status_reason"] == "disk gone"
    cli.ok("stack", "resource", "mark-unhealthy", "s", "b", "--reset")
    shown = cli("stack", "resource", "show", "s", "b", "-f", "json").json()
    assert shown["resource_status"] == "CHECK_COMPLETE"

    # No built-in type takes signals yet: the service's refusal reaches the user.
    refused = cli("stack", "resource", "signal", "s", "b", "--data", '{"status": "SUCCESS"}')
    assert refused.code == 1 and "does not accept signals" in refused.err
    data = write(tmp_path, "signal.json", '{"status": "SUCCESS"}')
    refused = cli("stack", "resource", "signal", "s", "b", "--data-file", data)
    assert refused.code == 1 and "does not accept signals" in refused.err
    assert cli("stack", "resource", "signal", "s", "b", "--data", "[1]").code == 1
    assert cli("stack", "resource", "signal", "s", "b", "--data", "{").code == 1
    both = cli("stack", "resource", "signal", "s", "b", "--data", "{}", "--data-file", data)
    assert both.code == 1
    assert cli("stack", "resource", "signal", "s", "nope", "--data", "{}").code == 1


# -- user errors ----------------------------------------------------------------------


def test_user_errors_exit_1_without_a_traceback(cli: Cli, simple: str, tmp_path: Path) -> None:
    unknown = cli("stack", "show", "nope")
    assert unknown.code == 1 and "The Stack (nope) could not be found." in unknown.err
    assert cli("stack", "resource", "list", "nope").code == 1
    bad = write(
        tmp_path,
        "bad.yaml",
        "heat_template_version: 2021-04-16\nresources:\n  x: {type: Nope::Nope}\n",
    )
    invalid = cli("stack", "create", "-t", bad, "x")
    assert invalid.code == 1
    assert f"{bad}:3:" in invalid.err and "Nope::Nope" in invalid.err
    cli.ok("stack", "create", "-t", simple, "s")
    again = cli("stack", "create", "-t", simple, "s")
    assert again.code == 1 and "already exists" in again.err
    assert cli("stack", "create", "-t", simple, "t", "--timeout", "0").code == 1


def test_a_failed_operation_exits_1(cli: Cli, tmp_path: Path) -> None:
    failing = write(tmp_path, "failing.yaml", FAILING)
    failed = cli("stack", "create", "-t", failing, "f", "--wait")
    assert failed.code == 1
    assert "Stack f CREATE_FAILED" in failed.out
    assert "error: Stack f CREATE_FAILED" in failed.err and "Test Resource failed bad" in failed.err
    rolled = cli("stack", "create", "-t", failing, "g", "--wait", "--enable-rollback")
    assert rolled.code == 1
    assert "ROLLBACK_COMPLETE" in rolled.out
    assert "CREATE failed and was rolled back" in rolled.err
    assert "Test Resource failed bad" in rolled.err


# -- scoping: --db, CONVECTION_DB, --project -------------------------------------------


def test_projects_scope_stack_names(
    cli: Cli, simple: str, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli.ok("--project", "alpha", "stack", "create", "-t", simple, "s", "--wait")
    cli.ok("--project", "beta", "stack", "create", "-t", simple, "s", "--wait")
    alpha = cli("--project", "alpha", "stack", "list", "-f", "json").json()
    beta = cli("--project", "beta", "stack", "list", "-f", "json").json()
    assert len(alpha) == len(beta) == 1 and alpha[0]["id"] != beta[0]["id"]
    out = cli("--project", "beta", "stack", "output", "show", "s", "project", "-f", "json")
    assert out.json()["output_value"] == "beta"  # OS::project_id
    assert cli("stack", "list", "-f", "json").json() == []  # project "default"
    everyone = cli("stack", "list", "--all-projects", "-f", "json").json()
    assert sorted(s["project"] for s in everyone) == ["alpha", "beta"]
    assert "Project" in cli.ok("stack", "list", "--all-projects").out

    monkeypatch.setenv("CONVECTION_PROJECT", "alpha")
    monkeypatch.setenv("CONVECTION_DB", db)
    code = run(["stack", "show", "s", "-f", "json"])  # no --db, no --project
    body = json.loads(cli.capsys.readouterr().out)
    assert code == 0 and body["id"] == alpha[0]["id"]


# -- the console script, as a real process ------------------------------------------------


def test_console_script_create_wait_as_a_real_process(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    env["CONVECTION_DB"] = f"sqlite:///{tmp_path / 'proc.db'}"
    done = subprocess.run(
        [str(EXE), "stack", "create", *hello_files(), "hello", "--wait", "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    body = json.loads(done.stdout)
    assert body["stack_status"] == "CREATE_COMPLETE"
    assert [o["output_key"] for o in body["outputs"]] == ["config", "hosts"]
