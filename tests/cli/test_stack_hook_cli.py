"""``convection stack hook clear|poll``, the ``--pre-create``/``--pre-update``
flags, ``stack list``'s filters and paging, ``event list --marker``, the
stored template/environment/files, and ``update --existing -e``: on a real
SQLite file, in-process, as a user runs them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from convection.cli.context import Invocation
from convection.cli.progress import Frame, _live_parts

from .test_stack_cli import Cli, write

GATES = """\
heat_template_version: 2021-04-16
description: three gates
parameters:
  greeting: {type: string, default: hi}
  token: {type: string, default: t0ken, hidden: true}
resources:
  a: {type: OS::Heat::None}
  b: {type: OS::Heat::None}
  c:
    type: OS::Heat::Value
    properties: {value: {get_param: greeting}}
    depends_on: [a, b]
outputs:
  greeting: {value: {get_attr: [c, value]}}
"""


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db: str) -> Cli:
    return Cli(capsys, db)


@pytest.fixture
def gates(tmp_path: Path) -> str:
    return write(tmp_path, "gates.yaml", GATES)


def run_until_waiting(db: str, stack: str, count: int) -> None:
    """Run an engine here until ``count`` resources wait at hooks."""
    inv = Invocation(flags={"db": db})
    try:
        stacks = inv.stacks
        stacks.run_engine(
            until=lambda: len(stacks.hook_poll(inv.project, stack)) >= count, timeout=20
        )
    finally:
        inv.close()


def test_pre_create_flags_poll_and_clear(cli: Cli, gates: str, db: str) -> None:
    cli.ok("stack", "create", "-t", gates, "s", "--pre-create", "a", "--pre-create", "b")
    run_until_waiting(db, "s", 2)
    polled = cli("stack", "hook", "poll", "s", "-f", "json").json()
    assert sorted((p["resource_name"], p["hook_type"]) for p in polled) == [
        ("a", "pre-create"),
        ("b", "pre-create"),
    ]
    assert {p["resource_status_reason"] for p in polled} == {
        "CREATE paused until Hook pre-create is cleared"
    }
    table = cli.ok("stack", "hook", "poll", "s").out
    for column in ("Resource Name", "Resource Status Reason", "Event Time"):
        assert column in table

    refused = cli("stack", "hook", "clear", "s", "a", "--pre-update")
    assert refused.code == 1 and 'The "pre-update" hook is not defined' in refused.err
    assert cli("stack", "hook", "clear", "s", "a", "--pre-create", "--post-create").code == 1
    nested = cli("stack", "hook", "clear", "s", "nested/a")
    assert nested.code == 1 and "resources.nested: The Resource (nested) could not" in nested.err

    cli.ok("stack", "hook", "clear", "s", "a")  # the type follows the stack: pre-create
    polled = cli("stack", "hook", "poll", "s", "-f", "json").json()
    assert [p["resource_name"] for p in polled] == ["b"]
    cli.ok("stack", "hook", "clear", "s", "*")  # wildcards clear what waits, only
    assert cli("stack", "hook", "poll", "s", "-f", "json").json() == []
    waited = cli("stack", "wait", "s", "-f", "json").json()
    assert waited[0]["stack_status"] == "CREATE_COMPLETE"
    done = cli("stack", "hook", "poll", "s")
    assert done.code == 1 and "not IN_PROGRESS" in done.err
    log = cli.ok("stack", "event", "list", "s", "--resource", "a").out
    assert "CREATE paused until Hook pre-create is cleared" in log
    assert "Hook pre-create is cleared" in log


def test_update_pre_update_flag_and_signal(cli: Cli, gates: str, db: str, tmp_path: Path) -> None:
    cli.ok("stack", "create", "-t", gates, "s", "--wait")
    cli.ok("stack", "update", "s", "--existing", "--parameter", "greeting=yo", "--pre-update", "c")
    run_until_waiting(db, "s", 1)
    shown = cli("stack", "resource", "show", "s", "c", "-f", "json").json()
    assert shown["resource_status"] == "CREATE_COMPLETE"
    data = write(tmp_path, "unset.json", '{"unset_hook": "pre-update"}')
    cli.ok("stack", "resource", "signal", "s", "c", "--data-file", data)
    cli.ok("stack", "wait", "s")
    assert cli("stack", "output", "show", "s", "greeting", "-f", "json").json()["output_value"] == (
        "yo"
    )
    environment = cli("stack", "environment", "show", "s", "-f", "json").json()
    assert environment["resource_registry"]["resources"] == {"c": {"hooks": "pre-update"}}


def test_update_existing_with_environment_files_only(cli: Cli, gates: str, tmp_path: Path) -> None:
    cli.ok("stack", "create", "-t", gates, "s", "--wait")
    (tmp_path / "envs").mkdir()
    write(tmp_path / "envs", "thing.yaml", "heat_template_version: 2021-04-16\n")
    env = write(
        tmp_path / "envs",
        "env.yaml",
        "parameters: {greeting: from-env}\nresource_registry: {My::Thing: thing.yaml}\n",
    )
    done = cli("stack", "update", "s", "--existing", "-e", env, "--wait")
    assert done.code == 0, done.err
    out = cli("stack", "output", "show", "s", "greeting", "-f", "json").json()
    assert out["output_value"] == "from-env"
    files = cli("stack", "file", "list", "s", "-f", "json").json()
    thing = (tmp_path / "envs" / "thing.yaml").resolve().as_uri()
    assert thing in files  # named by the new environment: collected and stored
    environment = cli("stack", "environment", "show", "s", "-f", "json").json()
    assert environment["resource_registry"]["My::Thing"] == thing
    assert environment["parameters"]["greeting"] == "from-env"
    shown = cli("stack", "template", "show", "s", "-f", "json").json()
    assert shown["description"] == "three gates"  # the stored template, reused
    assert "file:" in cli.ok("stack", "file", "list", "s").out


def test_environment_show_masks_hidden_values(cli: Cli, gates: str) -> None:
    cli.ok("stack", "create", "-t", gates, "s", "--parameter", "token=secret")
    environment = cli("stack", "environment", "show", "s", "-f", "json").json()
    assert environment["parameters"]["token"] == "******"
    assert "secret" not in cli.ok("stack", "environment", "show", "s").out


def test_stack_list_filters_and_paging(cli: Cli, gates: str) -> None:
    for name, tags in (("one", "web,prod"), ("two", "web"), ("three", "db")):
        cli.ok("stack", "create", "-t", gates, name, "--tags", tags, "--wait")

    def names(*args: str) -> list[str]:
        return [s["stack_name"] for s in cli("stack", "list", *args, "-f", "json").json()]

    assert names() == ["three", "two", "one"]
    assert names("--tags", "web,prod") == ["one"]
    assert names("--tags", "prod,db", "--tag-mode", "any") == ["three", "one"]
    assert names("--tags", "web,prod", "--tag-mode", "not") == ["three", "two"]
    assert names("--tags", "web", "--tag-mode", "not-any") == ["three"]
    assert names("--sort", "stack_name:asc") == ["one", "three", "two"]
    assert names("--sort", "stack_name") == ["one", "three", "two"]
    first = cli("stack", "list", "--sort", "stack_name", "--limit", "2", "-f", "json").json()
    assert [s["stack_name"] for s in first] == ["one", "three"]
    rest = names("--sort", "stack_name", "--limit", "2", "--marker", first[-1]["id"])
    assert rest == ["two"]
    assert names("--property", "name=two", "--property", "name=one") == ["two", "one"]
    assert names("--property", "status=CREATE_COMPLETE") == ["three", "two", "one"]
    assert cli("stack", "list", "-f", "json").json()[0]["description"] == "three gates"
    assert cli("stack", "list", "--tag-mode", "some", "--tags", "x").code != 0
    assert cli("stack", "list", "--sort", "size").code == 1
    assert cli("stack", "list", "--property", "colour=red").code == 1


def test_event_list_marker_and_sort(cli: Cli, gates: str) -> None:
    cli.ok("stack", "create", "-t", gates, "s", "--wait")
    every = cli("stack", "event", "list", "s", "-f", "json").json()
    after = cli("stack", "event", "list", "s", "--marker", every[1]["id"], "-f", "json").json()
    assert [e["id"] for e in after] == [e["id"] for e in every[2:]]
    newest = cli("stack", "event", "list", "s", "--sort", "event_time:desc", "-f", "json").json()
    assert [e["id"] for e in newest] == [e["id"] for e in reversed(every)]
    assert cli("stack", "event", "list", "s", "--sort", "colour").code == 1


def test_the_live_view_says_who_waits_at_a_hook(cli: Cli, gates: str, db: str) -> None:
    cli.ok("stack", "create", "-t", gates, "s", "--pre-create", "a")
    run_until_waiting(db, "s", 1)
    inv = Invocation(flags={"db": db})
    try:
        stack = inv.stacks.show(inv.project, "s")
        frame = Frame(
            elapsed=1.0,
            stacks=[stack],
            resources={stack["id"]: inv.stacks.resources(inv.project, "s")},
            hooks={stack["id"]: inv.stacks.hook_poll(inv.project, "s")},
        )
    finally:
        inv.close()
    screen = Console(file=io.StringIO(), width=200)
    screen.print(*_live_parts(frame))
    assert "a waits at pre-create: convection stack hook clear s a --pre-create" in (
        screen.file.getvalue()  # type: ignore[attr-defined]
    )
