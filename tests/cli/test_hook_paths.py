"""Hooks in nested stacks named by path (heatclient's ``web/3``):
examples/canary through the real CLI, as its README runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from convection.cli.context import Invocation

from .test_stack_cli import Cli

EXAMPLE = Path(__file__).parents[2] / "examples" / "canary"
FILES = ["-t", str(EXAMPLE / "template.yaml"), "-e", str(EXAMPLE / "canary.yaml")]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db: str) -> Cli:
    return Cli(capsys, db)


def run_until_held(db: str) -> None:
    """Run an engine here until the canary waits at its hook."""
    inv = Invocation(flags={"db": db})
    try:
        stacks = inv.stacks
        stacks.run_engine(
            until=lambda: bool(stacks.hook_poll(inv.project, "canary-demo", nested_depth=1)),
            timeout=20,
        )
    finally:
        inv.close()


@pytest.fixture
def held(cli: Cli, db: str) -> Cli:
    cli.ok("stack", "create", *FILES, "canary-demo", "--wait")
    cli.ok("stack", "update", *FILES, "--parameter", "version=v2", "canary-demo")
    run_until_held(db)
    return cli


def members(cli: Cli) -> list[str]:
    shown = cli("stack", "output", "show", "canary-demo", "members", "-f", "json").json()
    return list(shown["output_value"])


def test_poll_nested_depth_shows_the_path_and_clear_takes_it(held: Cli) -> None:
    assert held("stack", "hook", "poll", "canary-demo", "-f", "json").json() == []
    polled = held("stack", "hook", "poll", "canary-demo", "--nested-depth", "1", "-f", "json")
    rows = polled.json()
    assert [(p["resource_path"], p["hook_type"]) for p in rows] == [("web/3", "post-update")]
    assert rows[0]["resource_name"] == "3"
    assert rows[0]["stack_name"].startswith("canary-demo-web-")
    table = held.ok("stack", "hook", "poll", "canary-demo", "-n", "1").out
    assert "Resource Path" in table and "web/3" in table and "Stack Name" in table

    held.ok("stack", "hook", "clear", "canary-demo", "web/3", "--post-update")
    assert held("stack", "hook", "poll", "canary-demo", "-n", "1", "-f", "json").json() == []
    again = held("stack", "hook", "clear", "canary-demo", "web/3", "--post-update")
    assert again.code == 1 and 'The "post-update" hook is not defined' in again.err
    waited = held("stack", "wait", "canary-demo", "-f", "json").json()
    assert waited[0]["stack_status"] == "UPDATE_COMPLETE"
    assert members(held) == [f"web-{i} runs v2" for i in range(4)]


def test_bad_paths_name_the_place(held: Cli) -> None:
    cases = {
        "nope/3": "resources.nope: The Resource (nope) could not be found",
        "web/9": "resources.web.resources.9: The Resource (9) could not be found",
        "web/3/x": "resources.web.resources.3: OS::Heat::Value has no nested stack",
    }
    for path, message in cases.items():
        refused = held("stack", "hook", "clear", "canary-demo", path, "--post-update")
        assert refused.code == 1 and message in refused.err, (path, refused.err)
    waiting = held("stack", "hook", "poll", "canary-demo", "-n", "1", "-f", "json").json()
    assert [p["resource_path"] for p in waiting] == ["web/3"]


def test_wildcard_paths_clear_what_waits(held: Cli) -> None:
    none = held.ok("stack", "hook", "clear", "canary-demo", "w*/2", "--post-update")
    assert "No resource matching w*/2 waits at post-update" in none.err
    held.ok("stack", "hook", "clear", "canary-demo", "w*/*", "--post-update")
    assert held("stack", "hook", "poll", "canary-demo", "-n", "1", "-f", "json").json() == []
    waited = held("stack", "wait", "canary-demo", "-f", "json").json()
    assert waited[0]["stack_status"] == "UPDATE_COMPLETE"
