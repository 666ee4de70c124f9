"""Cron triggers and stored environments on every store (memory, SQLite,
PostgreSQL), with the real engine: Mistral's checks and messages, firing
once per due time whoever fires, and ``params.env`` naming an environment.

No test waits for a clock: a firing is asked for at a chosen ``now``
(``fire_due``), or a trigger is made with a ``now`` in the past so that
it is already due when the engine's sweep looks."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from convection.common import InvalidInput, NotFound
from convection.service.stacks import Stacks
from convection.store import CronTriggerExists, EnvironmentExists, Store
from convection.store.sql import SQLStore
from convection.workflows import (
    NotAllowed,
    create_cron_trigger,
    create_environment,
    delete_cron_trigger,
    delete_environment,
    engine_for,
    fire_due,
    get_cron_trigger,
    get_environment,
    list_cron_triggers,
    list_environments,
    list_executions,
    update_environment,
)
from convection.workflows.engine.cron_fire import execution_id
from convection.workflows.engine.stack_port import StackWorkflows

from .conftest import PROJECT, Runner

ECHO = """\
version: '2.0'
echo:
  input:
    - word: hi
  output:
    said: <% $.said %>
    env_word: <% env().get('word') %>
  tasks:
    say:
      action: std.echo output=<% $.word %>
      publish:
        said: <% task().result %>
"""
NOW = datetime.now(UTC).replace(microsecond=0)


def _trigger(store: Store, name: str = "t", **kw: object) -> dict[str, object]:
    kw.setdefault("pattern", "*/5 * * * *")
    return create_cron_trigger(store, PROJECT, name, workflow_name="echo", **kw)  # type: ignore[arg-type]


def _messages(call: Callable[[], object]) -> str:
    with pytest.raises(InvalidInput) as refused:
        call()
    return "\n".join(d.message for d in refused.value.diagnostics)


# -- environments ------------------------------------------------------------------------
def test_environment_crud_and_scope(runner: Runner) -> None:
    store = runner.store
    made = create_environment(
        store, PROJECT, {"name": "env1", "description": "d", "variables": {"word": "yo"}}
    )
    assert made["variables"] == {"word": "yo"} and made["scope"] == "private"
    assert set(made) == {"id", "name", "description", "variables", "scope", "project_id",
                         "created_at", "updated_at"}  # fmt: skip
    with pytest.raises(NotFound, match=r"Environment not found \[name=env1\]"):
        get_environment(store, "other", "env1")
    update_environment(store, PROJECT, {"name": "env1", "scope": "public", "variables": {"a": 1}})
    assert get_environment(store, "other", "env1")["variables"] == {"a": 1}
    assert [e["name"] for e in list_environments(store, "other")] == ["env1"]
    with pytest.raises(NotAllowed, match="Can not access Environment resource of other projects"):
        delete_environment(store, "other", "env1")
    bad_keys = _messages(lambda: create_environment(store, PROJECT, {"name": "e", "x": 1}))
    assert bad_keys == (
        "Please, check your environment definition. Only: ['name', 'description', 'variables', "
        "'scope'] are allowed as definition keys."
    )
    assert "Name of the environment is not provided." in _messages(
        lambda: update_environment(store, PROJECT, {"variables": {}})
    )
    with pytest.raises(EnvironmentExists, match="Duplicate entry for Environment"):
        create_environment(store, PROJECT, {"name": "env1"})
    delete_environment(store, PROJECT, "env1")
    assert list_environments(store, PROJECT) == []


def test_params_env_names_a_stored_environment(runner: Runner) -> None:
    runner.upload(ECHO)
    create_environment(runner.store, PROJECT, {"name": "words", "variables": {"word": "stored"}})
    done = runner.wait(runner.start("echo", params={"env": "words"}))
    assert done["state"] == "SUCCESS", done["state_info"]
    assert done["params"]["env"] == {"word": "stored"}
    assert done["output"]["env_word"] == "stored"
    missing = _messages(lambda: runner.start("echo", params={"env": "nope"}))
    assert missing == "Environment is not found: nope"


# -- cron triggers: Mistral's checks --------------------------------------------------------
def test_cron_trigger_validation_messages(runner: Runner) -> None:
    runner.upload(ECHO)
    store = runner.store
    soon = (NOW + timedelta(seconds=30)).strftime("%Y-%m-%d %H:%M")
    later = (NOW + timedelta(minutes=10)).strftime("%Y-%m-%d %H:%M")
    cases = {
        "Pattern or first_execution_time must be specified.": {"pattern": None},
        "first_execution_time must be at least 1 minute in the future.": {
            "pattern": None, "first_time": soon},
        "Pattern must be provided if count is superior to 1.": {
            "pattern": None, "first_time": later, "count": 2},
        "The specified pattern is not valid: 61 * * * *": {"pattern": "61 * * * *"},
        "time data 'tomorrow' does not match format '%Y-%m-%d %H:%M'": {"first_time": "tomorrow"},
    }  # fmt: skip
    for message, kw in cases.items():
        assert _messages(lambda kw=kw: _trigger(store, now=NOW, **kw)) == message  # type: ignore[misc]
    assert "Value should be greater or equal to 1" in _messages(lambda: _trigger(store, count=0))
    assert "unexpected=['nope']" in _messages(lambda: _trigger(store, workflow_input={"nope": 1}))
    with pytest.raises(NotFound, match=r"Workflow not found \[workflow_identifier=gone"):
        create_cron_trigger(store, PROJECT, "t", workflow_name="gone", pattern="* * * * *")
    assert list_cron_triggers(store, PROJECT) == []


def test_create_show_list_delete(runner: Runner) -> None:
    runner.upload(ECHO)
    store = runner.store
    at = datetime(2030, 5, 1, 12, 3, tzinfo=UTC)
    made = _trigger(store, "every5", workflow_input={"word": "w"}, now=at)
    assert made["next_execution_time"] == "2030-05-01 12:05:00"
    assert made["remaining_executions"] is None and made["workflow_input"] == {"word": "w"}
    once = _trigger(store, "once", pattern=None, first_time="2030-05-01 13:00", now=at)
    assert once["remaining_executions"] == 1
    assert once["first_execution_time"] == once["next_execution_time"] == "2030-05-01 13:00:00"
    assert get_cron_trigger(store, PROJECT, str(made["id"]))["name"] == "every5"
    assert [t["name"] for t in list_cron_triggers(store, PROJECT)] == ["every5", "once"]
    assert list_cron_triggers(store, "other") == []
    with pytest.raises(CronTriggerExists, match="Duplicate entry for cron trigger every5"):
        _trigger(store, "every5")
    delete_cron_trigger(store, PROJECT, "every5")
    with pytest.raises(NotFound, match=r"Cron trigger not found \[identifier=every5\]"):
        get_cron_trigger(store, PROJECT, "every5")


# -- firing --------------------------------------------------------------------------------
def test_a_due_trigger_fires_once_and_keeps_to_its_pattern(runner: Runner) -> None:
    runner.upload(ECHO)
    store = runner.store
    at = datetime(2030, 5, 1, 12, 3, tzinfo=UTC)
    made = _trigger(store, workflow_input={"word": "tick"}, now=at)
    due = datetime(2030, 5, 1, 12, 5, tzinfo=UTC)
    assert fire_due(store, due - timedelta(seconds=1)) == []  # not yet
    [started] = fire_due(store, due)
    assert started == execution_id(str(made["id"]), due)
    assert fire_due(store, due) == []  # fired already: nothing twice
    assert get_cron_trigger(store, PROJECT, "t")["next_execution_time"] == "2030-05-01 12:10:00"
    done = runner.wait(started)
    assert done["state"] == "SUCCESS", done["state_info"]
    assert done["output"]["said"] == "tick"
    assert f"cron trigger '({made['id']})'" in done["description"]


def test_a_missed_time_fires_once_then_the_next_future_time(runner: Runner) -> None:
    """Mistral's: after downtime the trigger fires once for what it missed
    and moves to the pattern's next time after now."""
    runner.upload(ECHO)
    store = runner.store
    _trigger(store, now=datetime(2030, 5, 1, 12, 3, tzinfo=UTC))
    back = datetime(2030, 5, 1, 15, 42, 10, tzinfo=UTC)  # hours of 5-minute ticks missed
    assert len(fire_due(store, back)) == 1
    assert get_cron_trigger(store, PROJECT, "t")["next_execution_time"] == "2030-05-01 15:45:00"
    assert fire_due(store, back) == []


def test_a_count_runs_out_and_the_trigger_goes(runner: Runner) -> None:
    runner.upload(ECHO)
    store = runner.store
    _trigger(store, count=2, now=datetime(2030, 5, 1, 12, 3, tzinfo=UTC))
    assert len(fire_due(store, datetime(2030, 5, 1, 12, 5, tzinfo=UTC))) == 1
    assert get_cron_trigger(store, PROJECT, "t")["remaining_executions"] == 1
    assert len(fire_due(store, datetime(2030, 5, 1, 12, 10, tzinfo=UTC))) == 1
    with pytest.raises(NotFound):
        get_cron_trigger(store, PROJECT, "t")
    assert len(list_executions(store, PROJECT)) == 2


def test_a_trigger_whose_workflow_went_moves_on(runner: Runner) -> None:
    runner.upload(ECHO)
    store = runner.store
    _trigger(store, now=datetime(2030, 5, 1, 12, 3, tzinfo=UTC))
    record = store.workflows.get_workflow(PROJECT, "echo")
    assert record is not None and store.workflows.delete_workflow(record.id)
    assert fire_due(store, datetime(2030, 5, 1, 12, 5, tzinfo=UTC)) == []
    assert get_cron_trigger(store, PROJECT, "t")["next_execution_time"] == "2030-05-01 12:10:00"


def test_the_engine_sweep_fires_a_due_trigger(runner: Runner) -> None:
    """A trigger made "ten minutes ago" is due: the running engine's own
    periodic check fires it and runs the execution."""
    runner.upload(ECHO)
    store = runner.store
    past = NOW - timedelta(minutes=10)
    _trigger(store, pattern=None, first_time=(past + timedelta(minutes=2)).strftime(
        "%Y-%m-%d %H:%M"), now=past)  # fmt: skip

    def ended() -> bool:
        found = list_executions(store, PROJECT)
        return bool(found) and all(e["state"] == "SUCCESS" for e in found)

    runner.stacks.run_engine(until=ended, timeout=30)
    [execution] = list_executions(store, PROJECT)
    assert execution["state"] == "SUCCESS"
    with pytest.raises(NotFound):  # a one-off trigger is gone once fired
        get_cron_trigger(store, PROJECT, "t")


def test_engines_sharing_a_store_fire_each_due_time_once(
    store_factory: Callable[[], Store],
) -> None:
    """Several engines (store instances, as processes have) fire at the
    same instant; then a restarted one fires the next due time, once."""
    first = store_factory()
    Runner(first).upload(ECHO)
    _trigger(first, now=datetime(2030, 5, 1, 12, 3, tzinfo=UTC))
    engines = [store_factory() for _ in range(3)]
    for store in engines:
        engine_for(Stacks(store))
    due = datetime(2030, 5, 1, 12, 5, tzinfo=UTC)
    barrier = threading.Barrier(len(engines))
    started: list[str] = []

    def engine(store: Store) -> None:
        barrier.wait()
        started.extend(fire_due(store, due))

    threads = [threading.Thread(target=engine, args=(s,)) for s in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(started) == 1 and len(list_executions(first, PROJECT)) == 1
    restarted = store_factory()
    back = datetime(2030, 5, 1, 12, 10, 30, tzinfo=UTC)
    assert len(fire_due(restarted, back)) == 1
    assert fire_due(store_factory(), back) == []
    assert len(list_executions(first, PROJECT)) == 2


def test_a_new_process_after_a_due_time_fires_it_once(tmp_path: Path) -> None:
    """The store is a file: an engine that stopped, then a new store object
    (as a new process has) after the due time."""
    url = f"sqlite:///{tmp_path / 'cron.db'}"
    store = SQLStore(url)
    Runner(store).upload(ECHO)
    _trigger(store, now=datetime(2030, 5, 1, 12, 3, tzinfo=UTC))
    store.close()
    again = SQLStore(url)
    try:
        runner = Runner(again)
        [started] = fire_due(again, datetime(2030, 5, 1, 12, 6, tzinfo=UTC))
        assert runner.wait(started)["state"] == "SUCCESS"
        assert fire_due(again, datetime(2030, 5, 1, 12, 6, tzinfo=UTC)) == []
    finally:
        again.close()


def test_the_stack_port_refuses_a_taken_name_and_deletes_idempotently(runner: Runner) -> None:
    runner.upload(ECHO)
    port = StackWorkflows(runner.store, PROJECT)

    async def go() -> None:
        kw: dict[str, object] = {"input": {}, "params": {}, "first_time": None, "count": None}
        made = await port.create_cron_trigger("c", "echo", pattern="* * * * *", **kw)  # type: ignore[arg-type]
        # A taken name is refused, as Mistral's API refuses it: the resource
        # decides whether the trigger of that name is its own (a re-run).
        with pytest.raises(CronTriggerExists, match="Duplicate entry for cron trigger c"):
            await port.create_cron_trigger("c", "echo", pattern="*/2 * * * *", **kw)  # type: ignore[arg-type]
        assert (await port.get_cron_trigger("c"))["id"] == made["id"]  # type: ignore[index]
        assert (await port.get_cron_trigger("c"))["workflow_name"] == "echo"  # type: ignore[index]
        await port.delete_cron_trigger("c")
        await port.delete_cron_trigger("c")  # gone already: not an error
        assert await port.get_cron_trigger("c") is None

    asyncio.run(go())
