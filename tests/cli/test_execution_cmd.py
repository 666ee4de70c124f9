"""``convection execution|task|action-execution ...`` as a user runs them, on a
real SQLite file, with workflows written as Mistral users write them.

Commands run in-process through ``convection.cli.main.run`` (stdout and
stderr captured); Ctrl-C runs the console script as a real process.
``--wait`` runs the embedded engine in the command's own process.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from convection.cli.context import Invocation
from convection.cli.execution_wait import wait_here
from convection.cli.main import run

EXE = Path(sys.executable).with_name("convection")

WORKFLOWS = """\
---
version: '2.0'

# Says hello, then shouts it.
greet:
  description: Greet someone.
  input:
    - who
    - punctuation: '!'
  output:
    greeting: <% $.greeting %>
    loud: <% $.loud %>
  tasks:
    hello:
      action: std.echo output="Hello, <% $.who %>"
      publish:
        greeting: <% task().result %>
      on-success:
        - shout
    shout:
      action: std.echo output="<% $.greeting %><% $.punctuation %>"
      publish:
        loud: <% task().result %>

# Fails on its second task.
broken:
  tasks:
    prepare:
      action: std.noop
      on-success:
        - explode
    explode:
      action: std.fail error_data="disk full"

# Needs a variable of the execution's environment.
needs_env:
  output:
    said: <% $.said %>
  tasks:
    say:
      action: std.echo output="<% env().greeting %>"
      publish:
        said: <% task().result %>

# Takes its time.
slow:
  output:
    said: <% $.said %>
  tasks:
    nap:
      action: std.sleep seconds=2
      on-success:
        - wake
    wake:
      action: std.echo output="awake"
      publish:
        said: <% task().result %>
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

    def json(self, *args: str) -> Any:
        return self(*args, "-f", "json").json()

    def start(self, workflow: str, *args: str) -> str:
        """An execution recorded without --wait: nobody runs it yet."""
        return str(self.json("execution", "create", workflow, *args)["id"])


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path) -> Cli:
    path = tmp_path / "workflows.yaml"
    path.write_text(WORKFLOWS)
    made = Cli(capsys, db)
    made.ok("workflow", "create", str(path))
    return made


def tasks_of(cli: Cli, execution_id: str) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in cli.json("task", "list", execution_id)}


# -- create --wait ---------------------------------------------------------------------
def test_create_wait_runs_it_and_shows_the_output(cli: Cli) -> None:
    done = cli("execution", "create", "greet", "--input", '{"who": "Ada"}', "--wait")
    assert done.code == 0, done.err
    assert "[hello]: SUCCESS" in done.out  # plain progress lines (not a terminal)
    assert "[shout]: SUCCESS" in done.out
    assert "Execution greet " in done.out and " SUCCESS" in done.out
    assert "Hello, Ada!" in done.out  # the output, in the final table
    for heading in ("Workflow name", "Task Execution ID", "Root Execution ID", "State info"):
        assert heading in done.out

    [execution] = cli.json("execution", "list")
    assert execution["state"] == "SUCCESS"
    shown = cli.ok("execution", "output", execution["id"]).out
    assert shown == json.dumps({"greeting": "Hello, Ada", "loud": "Hello, Ada!"}, indent=4) + "\n"
    given = json.loads(cli.ok("execution", "input", execution["id"]).out)
    assert given == {"who": "Ada", "punctuation": "!"}


def test_create_wait_as_json_keeps_stdout_clean(cli: Cli) -> None:
    done = cli("execution", "create", "greet", "-i", '{"who": "Bo"}', "--wait", "-f", "json")
    body = done.json()  # the progress went to stderr
    assert "[hello]: SUCCESS" in done.err
    assert body["state"] == "SUCCESS"
    assert body["output"] == {"greeting": "Hello, Bo", "loud": "Hello, Bo!"}
    expected = {
        "id", "workflow_id", "workflow_name", "workflow_namespace", "description", "tags",
        "params", "state", "state_info", "input", "output", "created_at", "updated_at",
        "task_execution_id", "root_execution_id", "project_id",
    }  # fmt: skip
    assert expected <= set(body)


def test_a_failing_workflow_exits_1_with_the_task_s_reason(cli: Cli) -> None:
    done = cli("execution", "create", "broken", "--wait")
    assert done.code == 1
    assert "[explode]: ERROR  disk full" in done.out
    assert "✗ explode: disk full" in done.out
    assert "error: Execution " in done.err and "(broken) ERROR" in done.err
    assert "disk full" in done.err
    [execution] = cli.json("execution", "list", "--state", "ERROR")
    failed = tasks_of(cli, execution["id"])["explode"]
    assert failed["state"] == "ERROR" and failed["state_info"] == "disk full"
    assert "[task_ex_id=" in cli.ok("execution", "show", execution["id"]).out  # not markup
    output = json.loads(cli.ok("execution", "output", execution["id"]).out)
    assert "disk full" in output["result"]


def test_live_progress_on_a_terminal(cli: Cli, db: str) -> None:
    execution_id = cli.start("greet", "-i", '{"who": "Cy"}')
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=120)
    inv = Invocation(flags={"db": db})
    try:
        result = wait_here(inv.workflows, inv.project, execution_id, terminal)
    finally:
        inv.close()
    assert result.exit_code() == 0
    assert result.state == "SUCCESS"
    assert {t["name"] for t in result.tasks} == {"hello", "shout"}
    shown = screen.getvalue()
    assert "Execution greet" in shown and execution_id in shown and "SUCCESS" in shown


def test_ctrl_c_leaves_the_execution_running(cli: Cli, db: str) -> None:
    process = subprocess.Popen(
        [str(EXE), "--db", db, "execution", "create", "slow", "--wait"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    seen = [process.stdout.readline()]  # progress lines, until the nap is running
    while "[nap]: RUNNING" not in seen[-1]:
        assert seen[-1] and len(seen) < 5, "".join(seen) + process.stderr.read()
        seen.append(process.stdout.readline())
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 130
    hint = process.stderr.read()
    assert "Traceback" not in hint
    assert f"convection --db {db} engine --until-idle" in hint
    [execution] = cli.json("execution", "list")
    assert execution["state"] == "RUNNING"
    assert f"execution cancel {execution['id']}" in hint

    cli.ok("engine", "--until-idle")
    assert cli.json("execution", "show", execution["id"])["state"] == "SUCCESS"
    assert json.loads(cli.ok("execution", "output", execution["id"]).out) == {"said": "awake"}


# -- reading tasks and action executions --------------------------------------------------
def test_tasks_and_action_executions(cli: Cli) -> None:
    cli.ok("execution", "create", "greet", "-i", '{"who": "Di"}', "--wait")
    [execution] = cli.json("execution", "list")
    table = cli.ok("task", "list", execution["id"]).out
    for heading in ("Workflow Execution ID", "Started at", "Finished at"):
        assert heading in table
    tasks = tasks_of(cli, execution["id"])
    assert set(tasks) == {"hello", "shout"}
    hello = tasks["hello"]
    assert hello["workflow_execution_id"] == execution["id"]
    assert hello["state"] == "SUCCESS" and hello["result"] == "Hello, Di"
    assert len(cli.json("task", "list")) == 2  # every execution's
    assert cli.json("task", "list", "--state", "ERROR") == []

    shown = yaml.safe_load(cli.ok("task", "show", hello["id"], "-f", "yaml").out)
    assert shown["name"] == "hello" and shown["published"] == {"greeting": "Hello, Di"}
    assert {"workflow_name", "workflow_id", "runtime_context", "type"} <= set(shown)
    assert "Workflow Execution ID" in cli.ok("task", "show", hello["id"]).out
    assert cli.ok("task", "result", hello["id"]).out == '"Hello, Di"\n'
    published = json.loads(cli.ok("task", "published", hello["id"]).out)
    assert published == {"greeting": "Hello, Di"}

    [action] = cli.json("action-execution", "list", hello["id"])
    assert action["name"] == "std.echo" and action["task_name"] == "hello"
    assert action["accepted"] is True and action["task_execution_id"] == hello["id"]
    assert len(cli.json("action-execution", "list")) == 2
    listed = cli.ok("action-execution", "list", hello["id"]).out
    assert "Task ID" in listed and "State info" not in listed  # as mistralclient lists them
    shown = yaml.safe_load(cli.ok("action-execution", "show", action["id"], "-f", "yaml").out)
    assert shown["input"] == {"output": "Hello, Di", "delay": 0}
    assert "State info" in cli.ok("action-execution", "show", action["id"]).out
    output = json.loads(cli.ok("action-execution", "output", action["id"]).out)
    assert output == {"result": "Hello, Di"}

    missing = cli("task", "show", "nope")
    assert missing.code == 1 and "could not be found" in missing.err


def test_execution_list_filters_sorts_and_pages(cli: Cli) -> None:
    first = cli.start("greet", "-i", '{"who": "a"}', "-d", "the first")
    second = cli.start("greet", "-i", '{"who": "b"}')
    other = cli.start("broken")
    assert [e["id"] for e in cli.json("execution", "list")] == [first, second, other]
    by_workflow = cli.json("execution", "list", "--workflow", "greet")
    assert [e["id"] for e in by_workflow] == [first, second]
    assert by_workflow[0]["description"] == "the first"
    assert cli.json("execution", "list", "--state", "SUCCESS") == []
    newest = cli.json("execution", "list", "--sort-dirs", "desc", "--limit", "1")
    assert [e["id"] for e in newest] == [other]
    page = cli.json("execution", "list", "--marker", first, "--limit", "1")
    assert [e["id"] for e in page] == [second]
    by_name = cli.json("execution", "list", "--sort-keys", "workflow_name")
    assert by_name[0]["id"] == other
    table = cli.ok("execution", "list").out
    for heading in ("ID", "Workflow ID", "Workflow namespace", "Description", "Created at"):
        assert heading in table
    assert cli("execution", "list", "--sort-keys", "colour").code == 1
    assert cli("execution", "list", "--sort-dirs", "sideways").code == 1


# -- changing executions -------------------------------------------------------------------
def test_pause_resume_and_cancel_an_execution_started_without_wait(cli: Cli) -> None:
    execution_id = cli.start("greet", "-i", '{"who": "Ed"}')
    assert cli.json("execution", "show", execution_id)["state"] == "RUNNING"
    assert cli.json("execution", "pause", execution_id)["state"] == "PAUSED"
    assert "PAUSED" in cli.ok("execution", "show", execution_id).out
    assert cli.json("execution", "resume", execution_id)["state"] == "RUNNING"
    cli.ok("engine", "--until-idle")
    assert cli.json("execution", "show", execution_id)["state"] == "SUCCESS"

    other = cli.start("greet", "-i", '{"who": "Flo"}')
    cancelled = cli.json("execution", "cancel", other, "--message", "not today")
    assert cancelled["state"] == "CANCELLED" and cancelled["state_info"] == "not today"
    cli.ok("engine", "--until-idle")
    assert cli.json("execution", "show", other)["state"] == "CANCELLED"
    refused = cli("execution", "pause", other)
    assert refused.code == 1
    assert "Can't change workflow execution state from CANCELLED to PAUSED" in refused.err


def test_create_wait_ends_on_a_pause_with_a_hint(cli: Cli) -> None:
    execution_id = cli.start("greet", "-i", '{"who": "Gus"}')
    cli.ok("execution", "pause", execution_id)
    # A paused execution is not waited on forever: --wait's engine stops.
    inv = Invocation(flags={"db": cli.db})
    try:
        result = wait_here(inv.workflows, inv.project, execution_id, Console(file=io.StringIO()))
    finally:
        inv.close()
    assert result.state == "PAUSED" and result.exit_code() == 1


def test_rerun_and_skip_a_failed_task(cli: Cli) -> None:
    assert cli("execution", "create", "needs_env", "--wait").code == 1
    [execution] = cli.json("execution", "list")
    say = tasks_of(cli, execution["id"])["say"]
    assert say["state"] == "ERROR" and "greeting" in say["state_info"]
    rerun = cli.json("task", "rerun", say["id"], "--env", '{"greeting": "hi"}')
    assert rerun["state"] == "RUNNING"
    cli.ok("engine", "--until-idle")
    done = cli.json("execution", "show", execution["id"])
    assert done["state"] == "SUCCESS" and done["output"] == {"said": "hi"}
    assert done["params"]["env"] == {"greeting": "hi"}
    refused = cli("task", "rerun", say["id"])
    assert refused.code == 1
    assert "The current task execution must be in ERROR for rerun." in refused.err
    assert cli("task", "rerun", say["id"], "--env", "nope").code == 1

    assert cli("execution", "create", "broken", "--wait").code == 1
    [broken] = cli.json("execution", "list", "--workflow", "broken")
    explode = tasks_of(cli, broken["id"])["explode"]
    assert cli.json("task", "skip", explode["id"])["state"] == "SKIPPED"
    cli.ok("engine", "--until-idle")
    assert cli.json("execution", "show", broken["id"])["state"] == "SUCCESS"


def test_delete(cli: Cli) -> None:
    running = cli.start("greet", "-i", '{"who": "Hal"}')
    refused = cli("execution", "delete", running)
    assert refused.code == 1
    assert "Only completed executions can be deleted" in refused.err
    assert "Unable to delete the specified execution(s)." in refused.err
    done = cli("execution", "delete", running, "--force")
    assert done.code == 0, done.err
    assert f"Request to delete execution {running} has been accepted." in done.out
    assert cli.json("execution", "list") == []
    assert cli.json("task", "list") == []
    missing = cli("execution", "delete", "nope")
    assert missing.code == 1 and "could not be found" in missing.err


# -- errors ------------------------------------------------------------------------------------
def test_bad_input_names_the_option(cli: Cli, tmp_path: Path) -> None:
    bad = cli("execution", "create", "greet", "--input", "{who: Ada")
    assert bad.code == 1
    assert "--input: not valid JSON" in bad.err
    not_object = cli("execution", "create", "greet", "--input", '["Ada"]')
    assert not_object.code == 1 and "--input: expected a JSON object, not a list" in not_object.err
    absent = cli("execution", "create", "greet", "--input", f"@{tmp_path / 'absent.json'}")
    assert absent.code == 1 and "--input: cannot read" in absent.err
    as_json = cli("execution", "create", "greet", "--input", "{bad", "-f", "json")
    assert as_json.code == 1
    assert json.loads(as_json.out)["Error"].startswith("--input: not valid JSON")
    assert cli("execution", "create", "greet", "--param", "novalue").code == 1
    assert cli.json("execution", "list") == []  # nothing was started

    missing = cli("execution", "create", "greet")
    assert missing.code == 1 and "who" in missing.err  # a required input
    unknown = cli("execution", "create", "nope")
    assert unknown.code == 1 and "nope" in unknown.err


def test_input_and_params_from_files(cli: Cli, tmp_path: Path) -> None:
    given = tmp_path / "input.yaml"
    given.write_text("who: Ida\npunctuation: '?'\n")
    done = cli(
        "execution", "create", "greet", "--input", f"@{given}", "--param", 'env={"a": 1}',
        "--param", "note=plain", "--wait", "-f", "json",
    )  # fmt: skip
    body = done.json()
    assert body["output"]["loud"] == "Hello, Ida?"
    assert body["params"]["env"] == {"a": 1} and body["params"]["note"] == "plain"
    as_path = tmp_path / "input.json"  # python-mistralclient takes a bare path too
    as_path.write_text('{"who": "Jo"}')
    again = cli("execution", "create", "greet", "--input", str(as_path), "-f", "json").json()
    assert again["input"]["who"] == "Jo"
