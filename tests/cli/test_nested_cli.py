"""Nested stacks through the CLI: examples/nested-tiers deployed as a user
would, then read back with ``--nested-depth`` and ``--show-nested``."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_stack_cli import Cli

EXAMPLE = Path(__file__).parents[2] / "examples" / "nested-tiers"


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db: str) -> Cli:
    return Cli(capsys, db)


@pytest.fixture
def tiers(cli: Cli) -> Cli:
    files = ["-t", str(EXAMPLE / "template.yaml"), "-e", str(EXAMPLE / "env.yaml")]
    cli.ok("stack", "create", *files, "tiers", "--wait")
    return cli


def test_the_example_deploys_its_tiers_as_nested_stacks(tiers: Cli) -> None:
    body = tiers("stack", "show", "tiers", "-f", "json").json()
    assert body["stack_status"] == "CREATE_COMPLETE"
    outputs = {o["output_key"]: o["output_value"] for o in body["outputs"]}
    assert outputs["url"] == "https://shop.example.internal/"
    assert outputs["db_endpoint"] == "db.shop.staging.example.internal:5432"
    listed = tiers("stack", "list", "-f", "json").json()
    assert [s["stack_name"] for s in listed] == ["tiers"]
    every = tiers("stack", "list", "--show-nested", "-f", "json").json()
    nested = {s["stack_name"] for s in every} - {"tiers"}
    assert len(nested) == 2 and all(n.startswith(("tiers-db-", "tiers-web-")) for n in nested)
    # get_resource of a template resource: its nested stack's ARN, as in Heat.
    arns = {f"arn:openstack:heat::default:stacks/{s['stack_name']}/{s['id']}" for s in every}
    assert outputs["db_stack"] in arns


def test_resource_list_nested_depth(tiers: Cli) -> None:
    top = tiers("stack", "resource", "list", "tiers", "-f", "json").json()
    assert sorted(r["resource_name"] for r in top) == ["db", "web"]
    deep = tiers("stack", "resource", "list", "tiers", "-n", "1", "-f", "json").json()
    owners = {r["resource_name"]: r.get("parent_resource") for r in deep}
    assert owners == {
        "db": None,
        "web": None,
        "password": "db",
        "server": "db",
        "config": "web",
        "frontend": "web",
    }
    db_stack = {r["stack_name"] for r in deep if r.get("parent_resource") == "db"}
    assert db_stack == {tiers_child(tiers, "db")}
    table = tiers("stack", "resource", "list", "tiers", "--nested-depth", "1").out
    assert "parent_resource" in table and "frontend" in table


def tiers_child(cli: Cli, resource: str) -> str:
    every = cli("stack", "list", "--show-nested", "-f", "json").json()
    return next(s["stack_name"] for s in every if s["stack_name"].startswith(f"tiers-{resource}-"))


def test_event_list_nested_depth(tiers: Cli) -> None:
    plain = tiers("stack", "event", "list", "tiers").out
    assert "[server]" not in plain
    deep = tiers("stack", "event", "list", "tiers", "--nested-depth", "1").out
    db = tiers_child(tiers, "db")
    assert f"[{db}.server]: CREATE_COMPLETE" in deep
    rows = tiers("stack", "event", "list", "tiers", "-n", "1", "-f", "json").json()
    assert {e["stack_name"] for e in rows} >= {"tiers", db}


def test_delete_removes_the_nested_stacks(tiers: Cli) -> None:
    tiers.ok("stack", "delete", "tiers", "--wait", "--yes")
    every = tiers("stack", "list", "--show-nested", "-f", "json").json()
    assert every == []
