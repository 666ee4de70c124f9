"""The CLI against a live server (``--url``) prints what it prints embedded.

Every scenario runs twice, in this process through ``convection.cli.main.run``:
embedded (``--db`` on a private SQLite file, ``--wait`` running the engine
here) and against a real ``convection server --no-auth`` on a loopback port
(its own SQLite file; ``--wait`` only watches). Each command's stdout, stderr
and exit code must be the same once ids and timestamps are masked. Both modes
read the same template files and use the same project, so paths, names and
``OS::project_id`` are equal too.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from convection.cli.context import Invocation
from convection.cli.main import run

from ..api.conftest import free_port, start_server, wait_for

EXE = Path(sys.executable).with_name("convection")

SIMPLE = """\
heat_template_version: 2021-04-16
description: A value, a test resource that copies it, a handle.
parameters:
  greeting: {type: string, default: hi}
resources:
  a:
    type: OS::Heat::Value
    properties: {value: {get_param: greeting}}
  b:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [a, value]}}
  h: {type: OS::Heat::WaitConditionHandle}
outputs:
  out:
    description: what b stored
    value: {get_attr: [b, output]}
"""

UPDATED = SIMPLE.replace("  h: {type", "  c: {type: OS::Heat::None, depends_on: [b]}\n  h: {type")

BROKEN = """\
heat_template_version: 2021-04-16
resources:
  a:
    type: OS::Heat::Value
    properties: {value: {get_attr: [nowhere, value]}}
  b:
    type: OS::Heat::NoSuchType
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

OUTER = """\
heat_template_version: 2021-04-16
resources:
  first: {type: OS::Heat::None}
  inner: {type: inner.yaml, depends_on: [first]}
"""

INNER = """\
heat_template_version: 2021-04-16
resources:
  x: {type: OS::Heat::None}
  y: {type: OS::Heat::Value, properties: {value: 1}, depends_on: [x]}
"""

_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\dZ")
#: The random part of a physical resource name (``s-a-9bb22c01b79d``).
_SUFFIX = re.compile(r"(?<=-)[0-9a-f]{12}\b")


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def normalised(text: str) -> str:
    return _SUFFIX.sub("<suffix>", _TIME.sub("<time>", _ID.sub("<id>", text)))


@dataclass
class Mode:
    """``convection`` with one mode's global flags."""

    name: str
    flags: list[str]
    capsys: pytest.CaptureFixture[str]

    def __call__(self, *args: str) -> Result:
        code = run([*self.flags, *args])
        out, err = self.capsys.readouterr()
        assert "Traceback" not in err, err
        return Result(code, normalised(out), normalised(err))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("remote")
    live = start_server(f"sqlite:///{base / 'server.db'}", base / "server.log")
    yield live.url
    live.stop(30)


@pytest.fixture
def project() -> str:
    return f"p-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def here(capsys: pytest.CaptureFixture[str], db: str, project: str) -> Mode:
    return Mode("embedded", ["--db", db, "--project", project], capsys)


@pytest.fixture
def there(capsys: pytest.CaptureFixture[str], server: str, project: str) -> Mode:
    return Mode("remote", ["--url", server, "--project", project], capsys)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name, text in (
        ("simple", SIMPLE),
        ("updated", UPDATED),
        ("broken", BROKEN),
        ("outer", OUTER),
        ("inner", INNER),
        ("failing", FAILING),
    ):
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        out[name] = str(path)
    return out


Both = Callable[..., Result]


_EVENT_LINE = re.compile(r"^<time> \[.*\n", re.M)


def without_progress(result: Result) -> tuple[Result, set[str]]:
    """The result without its event lines, and those lines."""
    lines = set(_EVENT_LINE.findall(result.out))
    return Result(result.code, _EVENT_LINE.sub("", result.out), result.err), lines


@pytest.fixture
def both(here: Mode, there: Mode) -> Both:
    """Run a command in both modes; they must agree. Returns the result.

    With ``racing=True`` the event lines may differ in one way: a server
    works without waiting for anyone, so a watch that starts after the
    work (``stack wait``) sees fewer of them; never other ones."""

    def call(*args: str, racing: bool = False) -> Result:
        mine, theirs = here(*args), there(*args)
        if racing:
            (mine, seen_here), (theirs, seen_there) = map(without_progress, (mine, theirs))
            assert seen_there <= seen_here, f"{args}: {seen_there - seen_here}"
        assert theirs == mine, f"{args}:\nembedded: {mine}\nremote:   {theirs}"
        return mine

    return call


def test_create_and_reads_print_the_same(both: Both, files: dict[str, str]) -> None:
    created = both("stack", "create", "-t", files["simple"], "s", "--wait")
    assert created.code == 0 and "Stack s CREATE_COMPLETE" in created.out
    assert "[b]: CREATE_COMPLETE" in created.out  # the progress lines, polled from events
    assert "s " in both("stack", "list").out
    assert "CREATE_COMPLETE" in both("stack", "show", "s").out
    both("stack", "show", "s", "-f", "json")
    assert "hi" in both("stack", "output", "show", "s", "out").out
    both("stack", "output", "show", "s", "--all", "-f", "json")
    both("stack", "output", "list", "s")
    both("stack", "resource", "list", "s")
    both("stack", "resource", "show", "s", "b", "-f", "json")
    both("stack", "event", "list", "s")
    both("stack", "event", "list", "s", "--resource", "b", "-f", "json")
    both("stack", "template", "show", "s")
    both("stack", "file", "list", "s")


def test_updates_signals_and_delete_print_the_same(both: Both, files: dict[str, str]) -> None:
    assert both("stack", "create", "-t", files["simple"], "s", "--wait").code == 0
    preview = both("stack", "update", "s", "-t", files["updated"], "--dry-run")
    assert "1 to add" in preview.out
    both("stack", "preview", "s", "-t", files["updated"], "-f", "json")
    both("stack", "create", "other", "-t", files["simple"], "--dry-run")
    assert both("stack", "update", "s", "-t", files["updated"], "--wait").code == 0
    patched = both("stack", "update", "s", "--existing", "--parameter", "greeting=yo", "--wait")
    assert patched.code == 0 and "UPDATE_COMPLETE" in patched.out
    assert "yo" in both("stack", "output", "show", "s", "out").out
    signal = '{"status": "SUCCESS", "reason": "done", "data": "x", "id": "1"}'
    assert both("stack", "resource", "signal", "s", "h", "--data", signal).code == 0
    assert both("stack", "resource", "mark-unhealthy", "s", "b", "broken").code == 0
    assert "CHECK_FAILED" in both("stack", "resource", "show", "s", "b").out
    deleted = both("stack", "delete", "s", "-y", "--wait")
    assert deleted.code == 0 and "DELETE_COMPLETE" in deleted.out
    both("stack", "list", "--deleted")
    assert both("stack", "show", "s").code == 1


def test_deploy_and_a_failure_print_the_same(both: Both, files: dict[str, str]) -> None:
    deployed = both("deploy", "d", "-t", files["simple"])
    assert deployed.code == 0 and "hi" in deployed.out
    assert both("deploy", "d", "-t", files["updated"], "--dry-run").code == 0
    failed = both("stack", "create", "f", "-t", files["failing"], "--wait", "--enable-rollback")
    assert failed.code == 1 and "rolled back" in failed.err


def test_errors_print_the_same(both: Both, files: dict[str, str]) -> None:
    missing = both("stack", "show", "nope")
    assert missing.code == 1
    assert missing.err == "error: The Stack (nope) could not be found.\n"
    invalid = both("stack", "create", "-t", files["broken"], "x")
    assert invalid.code == 1
    assert f"{files['broken']}:5:" in invalid.err  # located at the line, as embedded
    assert "2 errors" in invalid.err
    both("stack", "create", "-t", files["broken"], "x", "-f", "json")
    assert both("stack", "update", "nope", "-t", files["simple"]).code == 1
    assert both("stack", "create", "-t", files["simple"], "s", "--wait").code == 0
    assert "already exists" in both("stack", "create", "-t", files["simple"], "s").err
    assert both("stack", "delete", "nope", "-y").code == 1
    assert both("stack", "hook", "clear", "s", "a", "--pre-create").code == 1
    assert both("stack", "output", "show", "s", "nope").code == 1
    assert both("stack", "event", "list", "s", "--sort", "name").code == 1


def _wait_for_hook(there: Mode, db: str, project: str, depth: int = 0) -> None:
    """Bring both to the hook: embedded, an engine must run; the server's runs."""
    inv = Invocation(flags={"db": db, "project": project})
    try:
        stacks = inv.local_stacks
        stacks.run_engine(
            until=lambda: bool(stacks.hook_poll(project, "g", nested_depth=depth)), timeout=20
        )
    finally:
        inv.close()
    poll = ("stack", "hook", "poll", "g", "-n", str(depth))
    wait_for(lambda: "paused" in there(*poll).out, "the server's engine at the hook", 20)


def test_hooks_and_wait_print_the_same(
    both: Both, there: Mode, files: dict[str, str], db: str, project: str
) -> None:
    assert both("stack", "create", "-t", files["simple"], "g", "--pre-create", "a").code == 0
    _wait_for_hook(there, db, project)
    poll = both("stack", "hook", "poll", "g")
    assert "paused until Hook pre-create" in poll.out
    assert both("stack", "hook", "clear", "g", "a").code == 0
    waited = both("stack", "wait", "g", racing=True)
    assert waited.code == 0 and "Stack g CREATE_COMPLETE" in waited.out
    assert "Hook pre-create is cleared" in both("stack", "event", "list", "g").out


def test_nested_stacks_print_the_same(
    both: Both, there: Mode, files: dict[str, str], db: str, project: str
) -> None:
    assert both("stack", "create", "-t", files["outer"], "n", "--wait").code == 0
    assert "parent_resource" in both("stack", "resource", "list", "n", "-n", "1").out
    assert ".x]: CREATE_COMPLETE" in both("stack", "event", "list", "n", "-n", "1").out
    hooked = ("stack", "create", "-t", files["outer"], "g", "--pre-create", "inner/x")
    assert both(*hooked).code == 0
    _wait_for_hook(there, db, project, depth=1)
    assert "inner/x" in both("stack", "hook", "poll", "g", "-n", "1").out
    assert both("stack", "hook", "clear", "g", "inner/x").code == 0
    assert both("stack", "wait", "g", racing=True).code == 0


def test_commands_without_a_route_refuse(there: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    for args in (["engine", "--until-idle"], ["server"], ["token", "list"]):
        refused = there(*args)
        assert refused.code == 2, args
        assert f"`convection {args[0]}` has no server route" in refused.err
    monkeypatch.setenv("CONVECTION_URL", there.flags[1])
    assert Mode("env", [], there.capsys)("engine").code == 2


def test_the_token_is_sent_but_never_shown(there: Mode) -> None:
    secret = "s3cr3t-" + uuid.uuid4().hex
    shown = there("--token", secret, "config", "show")
    assert secret not in shown.out + shown.err
    assert "******" in shown.out
    failed = there("--token", secret, "stack", "show", "nope")
    assert failed.code == 1 and secret not in failed.out + failed.err


def test_an_unreachable_server_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = Mode("remote", ["--url", url], capsys)("stack", "list")
    assert result.code == 1
    assert result.err.startswith(f"error: Cannot reach the server at {url}")


def test_a_bad_url_names_the_setting(capsys: pytest.CaptureFixture[str]) -> None:
    result = Mode("remote", ["--url", "http://h:8004/v1/p"], capsys)("stack", "list")
    assert result.code == 1
    assert "url (flag)" in result.err and "without /v1" in result.err


def test_a_token_made_by_token_create_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'auth.db'}"
    assert run(["--db", db, "token", "create", "--project", "p1", "-f", "json"]) == 0
    secret = json.loads(capsys.readouterr().out)["secret"]
    live = start_server(db, tmp_path / "auth.log", auth=True)
    try:
        base = ["--url", live.url, "--project", "p1"]
        listed = Mode("remote", [*base, "--token", secret], capsys)("stack", "list")
        assert listed.code == 0, listed.err
        assert secret not in listed.out + listed.err
        refused = Mode("remote", [*base, "--token", "not-a-token"], capsys)("stack", "list")
        assert refused.code == 1
        assert refused.err.startswith("error: The server refused the request (401)")
        other = Mode("remote", [*base[:2], "--token", secret], capsys)("stack", "list")
        assert other.code == 1 and "(403)" in other.err  # the token is p1's, not default's
    finally:
        live.stop(30)


def test_ctrl_c_stops_watching_and_says_how_to_watch_again(
    server: str, files: dict[str, str], project: str, tmp_path: Path
) -> None:
    """A real process: the stack waits at a hook, so only Ctrl-C ends the watch."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    env["CONVECTION_CONFIG"] = str(tmp_path / "absent.toml")
    argv = [str(EXE), "--url", server, "--project", project, "stack", "create"]
    argv += ["-t", files["simple"], "w", "--pre-create", "a", "--wait"]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # the first progress line: it is watching
    assert "[w]: CREATE_IN_PROGRESS" in line, line
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    assert "Stack w CREATE_IN_PROGRESS" in out
    assert "Stopped watching. The server goes on with the operation." in err
    assert f"--url {server} --project {project} stack wait w" in err
    assert "Traceback" not in err
