"""The workflow-family commands against a live server (``--url``) print what
they print embedded.

Every command runs twice, in this process through ``convection.cli.main.run``:
embedded (``--db`` on a private SQLite file; ``--wait`` runs the engine
here) and against a real ``convection server --no-auth`` on a loopback port
(its own SQLite file; its engine does the work, ``--wait`` only watches).
stdout, stderr and the exit code must be the same once ids and timestamps
are masked. Both modes read the same files and use the same project.

Where the server's engine would move an execution on while the embedded
one is not running (nothing runs there without ``--wait``), the scenario
uses a workflow that sleeps, so both see the same states.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from convection.cli.main import run
from convection.cli.output import stdout

from ..api.conftest import free_port, start_server

WORKFLOWS = """\
---
version: '2.0'

greet:
  description: Greet someone.
  owner: ann
  input:
    - who
  output:
    greeting: <% $.greeting %>
  tasks:
    hello:
      action: std.echo output="Hello, <% $.who %>"
      publish:
        greeting: <% task().result %>

needs_env:
  tasks:
    say:
      action: std.echo output="<% env().greeting %>"
      publish:
        said: <% task().result %>

slow:
  tasks:
    nap:
      action: std.sleep seconds=60
"""

GREET_CHANGED = """\
---
version: '2.0'
greet:
  description: Greet someone, politely.
  input:
    - who
    - how: Hello
  tasks:
    hello:
      action: std.echo output="<% $.how %>, <% $.who %>"
"""

BROKEN = """\
---
version: '2.0'
bad:
  tasks:
    a:
      action: std.noop
      on-success: [nowhere]
      retries: 3
"""

WORKBOOK = """\
---
version: '2.0'
name: ops
description: Operations.
actions:
  shout:
    base: std.echo
    base-input:
      output: <% $.text %>!
    input:
      - text
workflows:
  boot:
    tasks:
      hi:
        action: shout text="up"
"""

ACTIONS = """\
---
version: '2.0'
say_hi:
  description: Says hi.
  base: std.echo
  base-input:
    output: hi
"""

ENVIRONMENT = """\
name: prod
description: Production.
variables:
  greeting: hello from prod
"""

ENVIRONMENT_CHANGED = """\
{"name": "prod", "variables": {"greeting": "hi from prod", "zone": "b"}, "scope": "public"}
"""

ENVIRONMENT_BAD = """\
name: prod
colour: blue
"""

FILES = {
    "workflows": WORKFLOWS,
    "greet_changed": GREET_CHANGED,
    "broken": BROKEN,
    "workbook": WORKBOOK,
    "actions": ACTIONS,
    "environment": ENVIRONMENT,
    "environment_changed": ENVIRONMENT_CHANGED,
    "environment_bad": ENVIRONMENT_BAD,
}

_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?Z?")
#: A task's progress line under ``--wait`` (``TIME [task]: STATE``).
_PROGRESS = re.compile(r"^<time> \[.*\n", re.M)


def normalised(text: str) -> str:
    return _TIME.sub("<time>", _ID.sub("<id>", text))


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


@dataclass
class Mode:
    """``convection`` with one mode's global flags."""

    name: str
    flags: list[str]
    capsys: pytest.CaptureFixture[str]

    def raw(self, *args: str) -> tuple[int, str, str]:
        code = run([*self.flags, *args])
        out, err = self.capsys.readouterr()
        assert "Traceback" not in err and "internal error" not in err, err
        return code, out, err

    def __call__(self, *args: str) -> Result:
        code, out, err = self.raw(*args)
        return Result(code, normalised(out), normalised(err))

    def json(self, *args: str) -> Any:
        code, out, err = self.raw(*args, "-f", "json")
        assert code == 0, err
        return json.loads(out)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("remote-workflows")
    live = start_server(f"sqlite:///{base / 'server.db'}", base / "server.log")
    yield live.url
    live.stop(30)


@pytest.fixture
def project() -> str:
    return f"p-{uuid.uuid4().hex[:8]}"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables wide enough for whole ids, which are masked after printing."""
    monkeypatch.setattr(stdout, "width", 400)


@pytest.fixture
def here(capsys: pytest.CaptureFixture[str], db: str, project: str) -> Mode:
    return Mode("embedded", ["--db", db, "--project", project], capsys)


@pytest.fixture
def there(capsys: pytest.CaptureFixture[str], server: str, project: str) -> Mode:
    return Mode("remote", ["--url", server, "--project", project], capsys)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name, text in FILES.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        out[name] = str(path)
    return out


class Both:
    """Runs a command in both modes and checks that they agree."""

    def __init__(self, here: Mode, there: Mode) -> None:
        self.modes = (here, there)

    def __call__(self, *args: str, progress: bool = False) -> Result:
        return self.each(lambda _: args, progress=progress)

    def each(self, argv: Callable[[Mode], tuple[str, ...]], *, progress: bool = False) -> Result:
        """``argv(mode)`` in each mode (ids differ between the two stores).
        With ``progress``, ``--wait``'s task lines are left out: how many
        state changes a poll sees depends on timing, not on the mode."""
        mine, theirs = (mode(*argv(mode)) for mode in self.modes)
        if progress:
            mine, theirs = (Result(r.code, _PROGRESS.sub("", r.out), r.err) for r in (mine, theirs))
        assert theirs == mine, f"{argv(self.modes[0])}:\nembedded: {mine}\nremote:   {theirs}"
        return mine

    def ids(self, *args: str) -> tuple[str, str]:
        """The id of a JSON show, or of a listing's first row, in each mode."""
        here, there = (_first(mode.json(*args))["id"] for mode in self.modes)
        return here, there


def _first(body: Any) -> Any:
    return body[0] if isinstance(body, list) else body


@pytest.fixture
def both(here: Mode, there: Mode) -> Both:
    return Both(here, there)


def _pick(ids: tuple[str, str]) -> Callable[[Mode], str]:
    return lambda mode: ids[0] if mode.name == "embedded" else ids[1]


# -- definitions ------------------------------------------------------------------------
def test_workflows_print_the_same(both: Both, files: dict[str, str]) -> None:
    created = both("workflow", "create", files["workflows"])
    assert created.code == 0 and "greet" in created.out and "needs_env" in created.out
    assert "greet.owner" in created.err  # the warning, located, in both modes
    for fmt in ("json", "yaml"):
        both("workflow", "list", "-f", fmt)
    assert "slow" in both("workflow", "list", "--sort-keys", "name", "--sort-dirs", "desc").out
    assert both("workflow", "list", "--limit", "1", "-f", "json").out.count('"id"') == 1
    both("workflow", "list", "--filter", "name=greet", "-f", "json")
    assert "| who " in both("workflow", "show", "greet").out.replace("│", "|")
    both("workflow", "show", "greet", "-f", "yaml")
    assert both("workflow", "definition", "greet").out.startswith("version: '2.0'\ngreet:")
    assert "hello" in both("workflow", "graph", "greet", "-f", "mermaid").out
    updated = both("workflow", "update", files["greet_changed"], "-f", "json")
    assert 'how=\\"Hello\\"' in updated.out
    greet = both.ids("workflow", "show", "greet")
    by_id = both.each(
        lambda m: ("workflow", "update", files["greet_changed"], "--id", _pick(greet)(m))
    )
    assert by_id.code == 0
    deleted = both("workflow", "delete", "slow", "needs_env")
    assert deleted.out.count("has been accepted") == 2
    assert "greet" in both("workflow", "list").out


def test_workbooks_and_actions_print_the_same(both: Both, files: dict[str, str]) -> None:
    assert both("workbook", "create", files["workbook"]).code == 0
    both("workbook", "list", "-f", "json")
    assert "ops" in both("workbook", "show", "ops").out
    assert both("workbook", "definition", "ops").out == WORKBOOK
    assert both("workbook", "update", files["workbook"], "-f", "yaml").code == 0
    assert "ops.boot" in both("workflow", "list").out
    assert both("action", "create", files["actions"], "-f", "json").code == 0
    assert "say_hi" in both("action", "list", "--adhoc").out
    assert "std.echo" in both("action", "list", "--system").out
    both("action", "list", "-f", "json")
    shown = both("action", "show", "std.echo", "-f", "json")
    assert '"parameters"' in shown.out
    both("action", "show", "std.http")
    assert "Says hi." in both("action", "show", "say_hi").out
    assert both("action", "definition", "say_hi").out == ACTIONS
    assert both("action", "update", files["actions"]).code == 0
    assert both("action", "delete", "say_hi", "ops.shout").code == 0
    assert both("workbook", "delete", "ops").code == 0
    assert both("workbook", "list", "-f", "json").out == "[]\n"


# -- executions ---------------------------------------------------------------------------
def test_an_execution_waited_on_prints_the_same(both: Both, files: dict[str, str]) -> None:
    assert both("workflow", "create", files["workflows"]).code == 0
    done = both("execution", "create", "greet", "-i", '{"who": "Ann"}', "--wait", progress=True)
    assert done.code == 0 and "Execution greet <id> SUCCESS" in done.out
    assert "Hello, Ann" in done.out  # the Output row
    assert "SUCCESS" in both("execution", "list", "--workflow", "greet").out
    both("execution", "list", "--state", "SUCCESS", "--limit", "1", "-f", "yaml")
    execution = both.ids("execution", "list")
    of = _pick(execution)
    assert "greet" in both.each(lambda m: ("execution", "show", of(m))).out
    both.each(lambda m: ("execution", "show", of(m), "-f", "json"))
    assert '"who": "Ann"' in both.each(lambda m: ("execution", "input", of(m))).out
    assert "Hello, Ann" in both.each(lambda m: ("execution", "output", of(m))).out
    assert "hello" in both.each(lambda m: ("task", "list", of(m))).out
    both("task", "list", "--state", "SUCCESS", "-f", "json")
    task = _pick(both.ids("task", "list"))
    both.each(lambda m: ("task", "show", task(m)))
    both.each(lambda m: ("task", "show", task(m), "-f", "yaml"))
    assert "Hello, Ann" in both.each(lambda m: ("task", "result", task(m))).out
    assert "greeting" in both.each(lambda m: ("task", "published", task(m))).out
    assert "std.echo" in both.each(lambda m: ("action-execution", "list", task(m))).out
    both("action-execution", "list", "-f", "json")
    action = _pick(both.ids("action-execution", "list"))
    both.each(lambda m: ("action-execution", "show", action(m)))
    assert "Hello, Ann" in both.each(lambda m: ("action-execution", "output", action(m))).out
    assert both.each(lambda m: ("execution", "delete", of(m))).code == 0
    assert both("execution", "list", "-f", "json").out == "[]\n"


def test_a_failure_rerun_and_skip_print_the_same(both: Both, files: dict[str, str]) -> None:
    assert both("workflow", "create", files["workflows"]).code == 0
    failed = both("execution", "create", "needs_env", "--wait", progress=True)
    assert failed.code == 1 and "Execution needs_env <id> ERROR" in failed.out
    assert failed.err.startswith("error: Execution <id> (needs_env) ERROR: Failure caused by")
    assert "ERROR" in both("task", "list", "--state", "ERROR").out
    say = _pick(both.ids("task", "list"))
    rerun = both.each(lambda m: ("task", "rerun", say(m), "--env", '{"greeting": "hi"}'))
    assert rerun.code == 0 and "RUNNING" in rerun.out
    again = both("execution", "create", "needs_env", "--wait", progress=True)
    assert again.code == 1
    failed_task = _pick(both.ids("task", "list", "--state", "ERROR", "--sort-dirs", "desc"))
    skipped = both.each(lambda m: ("task", "skip", failed_task(m), "-f", "json"))
    assert '"state": "SKIPPED"' in skipped.out and "Task was skipped." in skipped.out
    refused = both.each(lambda m: ("task", "skip", failed_task(m)))
    assert refused.code == 1 and "Only failed tasks can be skipped" in refused.err


def test_pause_resume_cancel_and_delete_print_the_same(both: Both, files: dict[str, str]) -> None:
    assert both("workflow", "create", files["workflows"]).code == 0
    assert "RUNNING" in both("execution", "create", "slow", "-d", "nap time").out
    slow = _pick(both.ids("execution", "list"))
    assert "PAUSED" in both.each(lambda m: ("execution", "pause", slow(m))).out
    assert "RUNNING" in both.each(lambda m: ("execution", "resume", slow(m), "-f", "json")).out
    refused = both.each(lambda m: ("execution", "delete", slow(m)))
    assert refused.code == 1 and "Only completed executions can be deleted" in refused.err
    assert "Unable to delete the specified execution(s)." in refused.err
    cancelled = both.each(lambda m: ("execution", "cancel", slow(m), "-m", "not today"))
    assert "CANCELLED" in cancelled.out and "not today" in cancelled.out
    again = both.each(lambda m: ("execution", "pause", slow(m)))
    assert again.code == 1 and "Can't change workflow execution state" in again.err
    assert both.each(lambda m: ("execution", "delete", slow(m))).code == 0
    assert both("execution", "create", "slow").code == 0
    forced = _pick(both.ids("execution", "list"))
    assert both.each(lambda m: ("execution", "delete", forced(m), "--force")).code == 0


def test_a_refused_rerun_prints_the_same(both: Both, files: dict[str, str]) -> None:
    assert both("workflow", "create", files["workflows"]).code == 0
    both("execution", "create", "greet", "-i", '{"who": "Ann"}', "--wait", progress=True)
    task = _pick(both.ids("task", "list"))
    assert both.each(lambda m: ("task", "rerun", task(m))).code == 1


# -- cron triggers and environments ----------------------------------------------------------
def test_cron_triggers_print_the_same(both: Both, files: dict[str, str]) -> None:
    assert both("workflow", "create", files["workflows"]).code == 0
    trigger = ("cron-trigger", "create")
    made = both(*trigger, "nightly", "greet", '{"who": "Ann"}', "--pattern", "0 2 * * *")
    assert made.code == 0 and "| 0 2 * * *" in made.out.replace("│", "|")
    once = ("greet", '{"who": "Bob"}', "--first-time", "2031-01-02 03:04")
    utc = both(*trigger, "once", *once, "--utc", "--params", '{"env": "prod"}', "-f", "json")
    assert '"first_execution_time": "<time>"' in utc.out and '"env": "prod"' in utc.out
    assert both(*trigger, "local", *once, "--count", "1", "-f", "yaml").code == 0
    greet = _pick(both.ids("workflow", "show", "greet"))
    by_id = both.each(
        lambda m: (*trigger, "by_id", greet(m), '{"who": "Di"}', "--pattern", "@daily")
    )
    assert by_id.code == 0 and "greet" in by_id.out
    taken = both(*trigger, "nightly", "greet", '{"who": "Ann"}', "--pattern", "* * * * *")
    assert taken.code == 1 and "Duplicate entry for cron trigger nightly" in taken.err
    assert both("cron-trigger", "list").out.count("greet") == 4
    for fmt in ("json", "yaml"):
        both("cron-trigger", "list", "-f", fmt)
    assert "by_id" in both("cron-trigger", "list", "--sort-keys", "name", "--sort-dirs", "desc").out
    assert both("cron-trigger", "list", "--limit", "1", "-f", "json").out.count('"id"') == 1
    counted = both("cron-trigger", "list", "--filter", "remaining_executions=1", "-f", "json")
    assert counted.out.count('"id"') == 2  # a first time alone is one run
    assert "nightly" in both("cron-trigger", "list", "--filter", "name=nightly").out
    assert "Next execution time" in both("cron-trigger", "show", "nightly").out
    nightly = _pick(both.ids("cron-trigger", "show", "nightly"))
    both.each(lambda m: ("cron-trigger", "show", nightly(m), "-f", "yaml"))
    deleted = both("cron-trigger", "delete", "nightly", "once", "local", "by_id")
    assert deleted.out.count("has been accepted") == 4
    assert both("cron-trigger", "list", "-f", "json").out == "[]\n"


def test_environments_print_the_same(both: Both, files: dict[str, str]) -> None:
    made = both("environment", "create", files["environment"])
    assert made.code == 0 and "hello from prod" in made.out
    taken = both("environment", "create", files["environment"])
    assert taken.code == 1 and "Duplicate entry for Environment" in taken.err
    for fmt in ("table", "json", "yaml"):
        both("environment", "list", "-f", fmt)
    assert "Production." in both("environment", "show", "prod").out
    both("environment", "show", "prod", "-f", "json")
    changed = both("environment", "update", files["environment_changed"], "-f", "yaml")
    assert "zone: b" in changed.out and "scope: public" in changed.out
    assert "prod" in both("environment", "list", "--filter", "name=prod", "--limit", "1").out
    assert both("workflow", "create", files["workflows"]).code == 0
    ran = both("execution", "create", "needs_env", "--param", "env=prod", "--wait", progress=True)
    assert ran.code == 0 and "hi from prod" in ran.out
    deleted = both("environment", "delete", "prod", "nope")
    assert deleted.code == 1 and "Environment not found [name=nope]" in deleted.err
    assert both("environment", "list", "-f", "json").out == "[]\n"


# -- errors ---------------------------------------------------------------------------------
MISSING = "00000000-0000-4000-8000-000000000000"

ERRORS = [
    ("workflow", "show", "nope"),
    ("workflow", "show", "nope", "-f", "json"),
    ("workflow", "definition", "nope"),
    ("workflow", "graph", "nope"),
    ("workflow", "delete", "nope", "greet"),
    ("workflow", "create", "{workflows}"),
    ("workflow", "create", "{broken}"),
    ("workflow", "create", "{broken}", "-f", "json"),
    ("workflow", "update", "{broken}"),
    ("workflow", "list", "--sort-dirs", "sideways"),
    ("workflow", "list", "--sort-keys", "colour"),
    ("workflow", "list", "--marker", MISSING),
    ("workbook", "show", "nope"),
    ("workbook", "update", "{workbook}"),
    ("workbook", "delete", "nope"),
    ("action", "show", "nope"),
    ("action", "definition", "std.echo"),
    ("action", "delete", "std.echo"),
    ("action", "update", "{actions}"),
    ("execution", "create", "nope"),
    ("execution", "create", "greet"),
    ("execution", "create", "greet", "-i", '{"whom": 1}', "-f", "json"),
    ("execution", "create", "greet", "-i", "not json"),
    ("execution", "create", "greet", "--param", "env=[1]"),
    ("execution", "show", MISSING),
    ("execution", "input", MISSING),
    ("execution", "pause", MISSING),
    ("execution", "delete", MISSING),
    ("execution", "list", "--sort-keys", "colour"),
    ("task", "list", MISSING),
    ("task", "show", MISSING),
    ("task", "result", MISSING),
    ("task", "rerun", MISSING),
    ("task", "rerun", MISSING, "--env", "[1]"),
    ("task", "skip", MISSING),
    ("action-execution", "list", MISSING),
    ("action-execution", "show", MISSING),
    ("action-execution", "output", MISSING),
    ("cron-trigger", "create", "t", "greet", '{"who": "x"}', "--pattern", "nope"),
    ("cron-trigger", "create", "t", "greet", '{"who": "x"}', "--pattern", "nope", "-f", "json"),
    ("cron-trigger", "create", "t", "greet", '{"who": "x"}'),
    ("cron-trigger", "create", "t", "greet", "--pattern", "* * * * *"),
    ("cron-trigger", "create", "t", "nope", "--pattern", "* * * * *"),
    ("cron-trigger", "create", "t", MISSING, "--pattern", "* * * * *"),
    ("cron-trigger", "create", "t", "greet", '{"who": "x"}', "--first-time", "2001-01-01 00:00"),
    ("cron-trigger", "create", "t", "greet", '{"who": "x"}', "--first-time", "soon", "--utc"),
    ("cron-trigger", "create", "t", "greet", '{"who": "x"}', "--first-time", "soon"),
    (
        "cron-trigger",
        "create",
        "t",
        "greet",
        '{"who": "x"}',
        "--pattern",
        "* * * * *",
        "--count",
        "0",
    ),
    ("cron-trigger", "create", "t", "greet", "not json", "--pattern", "* * * * *"),
    (
        "cron-trigger",
        "create",
        "t",
        "greet",
        '{"who": "x"}',
        "--pattern",
        "* * * * *",
        "--params",
        "[1]",
    ),
    ("cron-trigger", "list", "--sort-keys", "colour"),
    ("cron-trigger", "list", "--filter", "remaining_executions=many"),
    ("cron-trigger", "show", "nope"),
    ("cron-trigger", "show", MISSING),
    ("cron-trigger", "delete", "nope"),
    ("environment", "create", "{environment_bad}"),
    ("environment", "create", "{environment_bad}", "-f", "json"),
    ("environment", "create", "{workflows}"),
    ("environment", "create", "absent.yaml"),
    ("environment", "update", "{environment}"),
    ("environment", "show", "nope"),
    ("environment", "delete", "nope"),
]


@pytest.mark.parametrize("args", ERRORS, ids=" ".join)
def test_errors_print_the_same(both: Both, files: dict[str, str], args: tuple[str, ...]) -> None:
    assert both("workflow", "create", files["workflows"]).code == 0
    failed = both(*(files.get(a.strip("{}"), a) if a.startswith("{") else a for a in args))
    assert failed.code == 1, failed
    assert failed.err.startswith("error: ") or "Unable to delete" in failed.err, failed.err


# -- the server itself ------------------------------------------------------------------------
def test_the_url_may_come_from_the_environment(
    there: Mode, files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert there("workflow", "create", files["workflows"]).code == 0
    monkeypatch.setenv("CONVECTION_URL", there.flags[1])
    from_env = Mode("env", there.flags[2:], there.capsys)
    assert "greet" in from_env("workflow", "list").out


def test_an_unreachable_server_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    for args in (("workflow", "list"), ("execution", "show", MISSING)):
        result = Mode("remote", ["--url", url], capsys)(*args)
        assert result.code == 1
        assert result.err.startswith(f"error: Cannot reach the server at {url}")


def test_a_refused_token_reads_as_the_stack_commands_say_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'auth.db'}"
    assert run(["--db", db, "token", "create", "--project", "p1", "-f", "json"]) == 0
    secret = json.loads(capsys.readouterr().out)["secret"]
    live = start_server(db, tmp_path / "auth.log", auth=True)
    try:
        good = Mode("remote", ["--url", live.url, "--project", "p1", "--token", secret], capsys)
        listed = good("workflow", "list", "-f", "json")
        assert listed == Result(0, "[]\n", "")
        for flags in (["--project", "p1", "--token", "cvt_wrong"], ["--token", secret]):
            mode = Mode("remote", ["--url", live.url, *flags], capsys)
            refused, stack = mode("workflow", "list"), mode("stack", "list")
            assert refused.code == 1 and refused.err == stack.err, (refused, stack)
            assert refused.err.startswith("error: The server refused the request (40")
            assert secret not in refused.out + refused.err
            assert mode("execution", "list").err == stack.err
    finally:
        live.stop(30)
