"""The fakes: a plugin from a function, the manual clock, the ledger type."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from convection.resources.api import InMemoryContext, PropertySchema, PropertyType, Wait
from convection.resources.testing import (
    LEDGER_ENV,
    Call,
    LedgerResource,
    ManualClock,
    fake_type,
    read_ledger,
    run_action,
)

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def test_fake_without_handler_is_a_no_op_that_names_its_resource() -> None:
    plugin, ctx = fake_type("Fake::Thing")(), InMemoryContext(resource_name="t")
    assert run(run_action(plugin, "create", ctx, {})) == 0
    assert ctx.physical_id == ctx.physical_resource_name
    assert run(plugin.reference_id(ctx, {})) == ctx.physical_id
    assert run(plugin.check(ctx, {})) is None
    assert type(plugin).attribute_names() is None


def test_fake_sends_every_call_to_its_handler() -> None:
    calls: list[Call] = []
    polls = iter([False, Wait(2.0), True])

    def handler(call: Call) -> Any:
        calls.append(call)
        if call.op == "create":
            return "tok"
        if call.op == "check_create_complete":
            return next(polls)
        if call.op == "attribute":
            return f"attr:{call.arg}"
        return None

    plugin, ctx, clock = fake_type("Fake::Thing", handler)(), InMemoryContext(), ManualClock()
    start = clock.time
    assert run(run_action(plugin, "create", ctx, {"a": 1}, clock=clock)) == 2
    assert clock.time == start + 1.0 + 2.0  # the default step, then the Wait
    assert [c.op for c in calls] == ["create"] + ["check_create_complete"] * 3
    assert calls[1].arg == "tok" and calls[0].properties == {"a": 1}
    assert run(plugin.attribute(ctx, {}, "ip")) == "attr:ip"
    run(plugin.signal(ctx, {}, {"status": "SUCCESS"}))
    assert calls[-1] == Call("signal", ctx, {}, {"status": "SUCCESS"})


def test_fake_accepts_async_handlers_and_failures() -> None:
    async def handler(call: Call) -> Any:
        if call.op == "delete":
            raise RuntimeError("boom")
        if call.op == "create":
            await call.ctx.set_physical_id("given")
        return None

    plugin, ctx = fake_type("Fake::Thing", handler)(), InMemoryContext()
    run(plugin.create(ctx, {}))
    assert ctx.physical_id == "given"
    with pytest.raises(RuntimeError, match="boom"):
        run(plugin.delete(ctx, {}))


def test_fake_with_schema_validates() -> None:
    cls = fake_type(
        "Fake::Typed", properties_schema={"n": PropertySchema(type=PropertyType.INTEGER)}
    )
    values, diags = cls.validate({"n": "3"}, ())
    assert values == {"n": 3} and diags == []
    assert cls.attribute_names() == frozenset({"show"})


def test_run_action_gives_up_instead_of_hanging() -> None:
    plugin = fake_type("Fake::Stuck", lambda call: False)()
    with pytest.raises(AssertionError, match="not complete after 5 polls"):
        run(run_action(plugin, "create", InMemoryContext(), {}, max_polls=5))


# -- the ledger ------------------------------------------------------------------------


def ledger_props(path: Path, **extra: Any) -> dict[str, Any]:
    values, diags = LedgerResource.validate({"path": str(path), **extra}, ())
    assert diags == []
    return values


def test_ledger_records_one_create_and_one_delete(tmp_path: Path) -> None:
    path = tmp_path / "ledger"
    plugin, ctx = LedgerResource(), InMemoryContext(stack_name="s", resource_name="r")
    props = ledger_props(path)
    run(plugin.create(ctx, props))
    run(plugin.create(ctx, props))  # re-run: the id is stored
    name = ctx.physical_resource_name
    assert read_ledger(path) == [("create", name)]
    run(plugin.delete(ctx, props))
    run(plugin.delete(ctx, props))
    assert read_ledger(path) == [("create", name), ("delete", name)]
    assert path.read_text().splitlines()[0] == f"create\t{name}\ts\tr"


def test_ledger_finds_what_a_crashed_create_made(tmp_path: Path) -> None:
    path = tmp_path / "ledger"
    props = ledger_props(path)
    ctx = InMemoryContext()
    run(LedgerResource().create(ctx, props))
    # The crash came after the append but before the id was stored.
    ctx.physical_id = None
    run(LedgerResource().create(ctx, props))
    assert len(read_ledger(path)) == 1
    ctx.physical_id = None  # and delete finds it by name too
    run(LedgerResource().delete(ctx, props))
    assert [event for event, _ in read_ledger(path)] == ["create", "delete"]


def test_ledger_delete_of_something_never_made_records_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger"
    run(LedgerResource().delete(InMemoryContext(), ledger_props(path)))
    assert read_ledger(path) == []


def test_ledger_path_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "env-ledger"
    monkeypatch.setenv(LEDGER_ENV, str(path))
    values, _ = LedgerResource.validate({}, ())
    run(LedgerResource().create(InMemoryContext(), values))
    assert len(read_ledger(path)) == 1
    monkeypatch.delenv(LEDGER_ENV)
    with pytest.raises(RuntimeError, match=LEDGER_ENV):
        run(LedgerResource().create(InMemoryContext(), values))


def test_ledger_wait_holds_the_action_open(tmp_path: Path) -> None:
    clock = ManualClock()
    ctx = InMemoryContext(clock=clock)
    props = ledger_props(tmp_path / "ledger", wait_secs=4, value="v")
    assert run(run_action(LedgerResource(), "create", ctx, props, clock=clock)) == 1
    assert run(LedgerResource().attribute(ctx, props, "value")) == "v"
