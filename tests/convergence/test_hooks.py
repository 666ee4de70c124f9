"""Hooks (breakpoints), as Heat runs them: a hooked resource waits, holding
no worker, until ``{unset_hook: <type>}`` arrives; the wait survives an
engine restart, and a clear sent while no engine runs is not lost.

Expectations follow ``heat_integrationtests/functional/test_hooks.py`` and
``heat/engine/resource.py`` (``_break_if_required``, ``signal``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from convection.common.errors import Conflict, InvalidInput
from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.store.sql import SQLStore

from .conftest import HEADER, Env, Recorder

CHAIN = """
resources:
  a: {type: Test::Rec, properties: {value: one}}
  b: {type: Test::Rec, properties: {value: {get_attr: [a, value]}}}
  c: {type: Test::Rec, properties: {value: {get_attr: [b, value]}}}
"""


def hooks_env(**hooks: str | list[str]) -> str:
    """``b="pre-create"`` -> an environment setting that hook on b;
    ``star_b`` stands for the pattern ``*b``."""
    lines = ["resource_registry:", "  resources:"]
    for name, hook in hooks.items():
        pattern = name.replace("star_", "*").replace("_star", "*")
        lines.append(f"    '{pattern}': {{hooks: {hook!r}}}")
    return "\n".join(lines) + "\n"


def inputs(text: str, env: str | None = None) -> StackInputs:
    envs = [("env.yaml", env)] if env else []
    return StackInputs.from_text(HEADER + textwrap.dedent(text), environments=envs)


def create(env: Env, text: str, env_text: str | None = None, **kw: Any) -> str:
    return str(env.stacks.create("p", "s", inputs(text, env_text), **kw)["id"])


def events(env: Env, resource: str) -> list[tuple[str, str]]:
    found = env.stacks.events("p", "s", resource_name=resource)
    return [(e["resource_status"], e["resource_status_reason"]) for e in found]


def run_until_waiting(env: Env, *names: str, turns: int = 3) -> list[int]:
    """Run the engine until every resource in ``names`` waits at a hook, then
    a few more turns of its loop; returns the running job count seen at each
    of those turns (the engine keeps running: the traversal is active)."""
    seen: list[int] = []

    def until() -> bool:
        waiting = {p["resource_name"] for p in env.stacks.hook_poll("p", "s")}
        if waiting >= set(names):
            seen.append(env.stacks.engine.executor.running)
            return len(seen) >= turns
        return False

    env.run_until(until)
    return seen


# -- create ------------------------------------------------------------------------


def test_pre_create_pauses_without_a_worker_until_cleared(env: Any) -> None:
    create(env, CHAIN, hooks_env(b="pre-create"))
    running = run_until_waiting(env, "b")
    assert running == [0, 0, 0]  # nothing runs while b waits
    stack_id = env.store.get_stack("p", "s").traversal_id
    assert stack_id in env.stacks.engine.runs  # yet the operation is active
    assert env.status()[0] == "CREATE_IN_PROGRESS"
    assert env.resource_status("a") == "CREATE_COMPLETE"
    assert env.resource_status("b") == "INIT_COMPLETE"
    assert env.rec.ops("create") == [("create", "a")]
    paused = ("INIT_COMPLETE", "CREATE paused until Hook pre-create is cleared")
    assert events(env, "b") == [paused]

    polled = env.stacks.hook_poll("p", "s")
    assert [(p["resource_name"], p["hook_type"]) for p in polled] == [("b", "pre-create")]
    assert polled[0]["resource_status_reason"] == paused[1]
    assert polled[0]["id"] == env.stacks.events("p", "s", resource_name="b")[0]["id"]

    env.stacks.hook_clear("p", "s", "b", "pre-create")
    assert events(env, "b")[-1] == ("INIT_COMPLETE", "Hook pre-create is cleared")
    assert env.stacks.hook_poll("p", "s") == []
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert env.rec.ops("create") == [("create", "a"), ("create", "b"), ("create", "c")]
    assert [s for s, _ in events(env, "b")] == [
        "INIT_COMPLETE",
        "INIT_COMPLETE",
        "CREATE_IN_PROGRESS",
        "CREATE_COMPLETE",
    ]


def test_signal_unset_hook_and_heats_refusals(env: Any) -> None:
    create(env, CHAIN, hooks_env(b="pre-create"))
    run_until_waiting(env, "b", turns=1)
    with pytest.raises(InvalidInput, match=r'Invalid hook type "pre-lunch" for Test::Rec "b"'):
        env.stacks.signal("p", "s", "b", {"unset_hook": "pre-lunch"})
    with pytest.raises(InvalidInput, match=r'The "pre-create" hook is not defined on .*"a"'):
        env.stacks.hook_clear("p", "s", "a", "pre-create")
    with pytest.raises(InvalidInput, match='The "post-create" hook is not defined'):
        env.stacks.hook_clear("p", "s", "b", "post-create")
    # Test::Rec takes no signals, but a hook signal never reaches the plugin.
    signal_id = env.stacks.signal("p", "s", "b", {"unset_hook": "pre-create"})
    assert env.store.pending_signals(env.store.get_stack("p", "s").id, "b") == []
    assert signal_id > 0
    with pytest.raises(InvalidInput, match='The "pre-create" hook is not defined'):
        env.stacks.hook_clear("p", "s", "b", "pre-create")  # cleared already
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert [r for _, r in events(env, "b")].count("Hook pre-create is cleared") == 1


def test_post_create_holds_dependents_until_cleared(env: Any) -> None:
    create(env, CHAIN, hooks_env(a="post-create"))
    assert run_until_waiting(env, "a") == [0, 0, 0]
    assert env.resource_status("a") == "CREATE_COMPLETE"
    assert env.rec.ops("create") == [("create", "a")]  # b waits for a
    assert events(env, "a")[-1] == (
        "CREATE_COMPLETE",
        "CREATE paused until Hook post-create is cleared",
    )
    env.stacks.hook_clear("p", "s", "a", "post-create")
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert env.rec.ops("create") == [("create", "a"), ("create", "b"), ("create", "c")]
    assert env.resources()["c"]["resource_status"] == "CREATE_COMPLETE"


def test_wildcard_hooks_stop_each_match_in_turn(env: Any) -> None:
    text = CHAIN.replace("  c:", "  bb:")
    create(env, text, hooks_env(star_b="pre-create"))  # *b: b and bb, not a
    run_until_waiting(env, "b", turns=1)
    assert env.resource_status("a") == "CREATE_COMPLETE"
    env.stacks.hook_clear("p", "s", "b", "pre-create")
    run_until_waiting(env, "bb", turns=1)
    assert env.resource_status("b") == "CREATE_COMPLETE"
    env.stacks.hook_clear("p", "s", "bb", "pre-create")
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"


# -- update ----------------------------------------------------------------------------


def test_pre_update_stops_changed_and_unchanged_resources(env: Any) -> None:
    create(env, CHAIN)
    env.wait()
    before = env.resources()
    changed = CHAIN.replace("value: one", "value: two") + "  d: {type: Test::Rec}\n"
    hooks = hooks_env(a="pre-update", c="pre-update", d="pre-create")
    env.stacks.update("p", "s", inputs(changed, hooks))
    run_until_waiting(env, "a", turns=1)
    assert env.status()[0] == "UPDATE_IN_PROGRESS"
    assert env.resource_status("a") == "CREATE_COMPLETE"  # the state does not change
    assert events(env, "a")[-1] == (
        "CREATE_COMPLETE",
        "UPDATE paused until Hook pre-update is cleared",
    )
    # A resource new in an update has no pre-create stop (Heat: stack CREATE only).
    assert env.resource_status("d") == "CREATE_COMPLETE"
    assert env.rec.ops("update") == []
    env.stacks.hook_clear("p", "s", "a", "pre-update")
    # c stops too: its value changes with a's, and Heat visits it either way.
    run_until_waiting(env, "c", turns=1)
    env.stacks.hook_clear("p", "s", "c", "pre-update")
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    after = env.resources()
    assert after["a"]["resource_status"] == "UPDATE_COMPLETE"
    assert after["a"]["physical_resource_id"] == before["a"]["physical_resource_id"]


def test_pre_update_stops_a_resource_that_does_not_change(env: Any) -> None:
    create(env, CHAIN)
    env.wait()
    env.stacks.update("p", "s", inputs(CHAIN, hooks_env(b="pre-update")))
    run_until_waiting(env, "b")
    env.stacks.hook_clear("p", "s", "b", "pre-update")
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert env.resource_status("b") == "CREATE_COMPLETE"  # nothing to update
    assert env.rec.ops("update", "create") == [("create", n) for n in "abc"]
    # Previewing shows it unchanged: only a real update stops there.
    preview = env.stacks.preview_update("p", "s", inputs(CHAIN, hooks_env(b="pre-update")))
    assert [r["resource_name"] for r in preview["unchanged"]] == ["a", "b", "c"]


def test_post_update_after_an_update_in_place(env: Any) -> None:
    create(env, CHAIN)
    env.wait()
    changed = CHAIN.replace("value: one", "value: two")
    env.stacks.update("p", "s", inputs(changed, hooks_env(a="post-update")))
    run_until_waiting(env, "a")
    assert env.resource_status("a") == "UPDATE_COMPLETE"
    assert ("update", "b") not in env.rec.calls
    assert events(env, "a")[-1] == (
        "UPDATE_COMPLETE",
        "UPDATE paused until Hook post-update is cleared",
    )
    env.stacks.hook_clear("p", "s", "a", "post-update")
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert env.resources()["c"]["resource_status"] == "UPDATE_COMPLETE"


# -- delete ------------------------------------------------------------------------------


def test_pre_and_post_delete(env: Any) -> None:
    create(env, CHAIN, hooks_env(b="pre-delete", a="post-delete"))
    env.wait()
    env.stacks.delete("p", "s")
    run_until_waiting(env, "b")
    assert env.rec.ops("delete") == [("delete", "c")]
    assert env.resource_status("b") == "CREATE_COMPLETE"
    assert events(env, "b")[-1] == (
        "CREATE_COMPLETE",
        "DELETE paused until Hook pre-delete is cleared",
    )
    env.stacks.hook_clear("p", "s", "b", "pre-delete")
    run_until_waiting(env, "a")
    assert env.rec.ops("delete") == [("delete", "c"), ("delete", "b"), ("delete", "a")]
    assert env.resource_status("a") == "DELETE_COMPLETE"  # kept until the hook is cleared
    assert events(env, "a")[-1] == (
        "DELETE_COMPLETE",
        "DELETE paused until Hook post-delete is cleared",
    )
    env.stacks.hook_clear("p", "s", "a", "post-delete")
    assert env.wait()["stack_status"] == "DELETE_COMPLETE"
    assert env.stacks.list("p") == []


def test_cancel_stops_a_resource_waiting_at_a_hook(env: Any) -> None:
    create(env, CHAIN, hooks_env(b="pre-create"))
    run_until_waiting(env, "b", turns=1)
    env.stacks.cancel_update("p", "s", rollback=False)
    shown = env.wait()
    assert (shown["stack_status"], shown["stack_status_reason"]) == (
        "CREATE_FAILED",
        "Stack CREATE cancelled",
    )
    assert events(env, "b")[-1] == ("INIT_COMPLETE", "Failure occurred while waiting.")
    assert env.stacks.hook_poll("p", "s") == []


def test_a_hook_cleared_after_the_stack_moved_on_is_refused(env: Any) -> None:
    create(env, CHAIN, hooks_env(b="pre-create"))
    run_until_waiting(env, "b", turns=1)
    env.stacks.delete("p", "s")  # supersedes the create
    with pytest.raises((InvalidInput, Conflict)):
        env.stacks.hook_clear("p", "s", "b", "pre-create")
    assert env.wait()["stack_status"] == "DELETE_COMPLETE"


# -- durability ---------------------------------------------------------------------------


def test_a_pause_survives_a_restart_and_a_clear_needs_no_engine(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hooks.db'}"
    config = EngineConfig(scan_seconds=0.05)
    first = Env(SQLStore(url), Recorder(), config)
    create(first, CHAIN, hooks_env(b="pre-create"))
    run_until_waiting(first, "b", turns=1)
    first.store.close()

    # No engine runs while the hook is cleared, from another process's store.
    second = Env(SQLStore(url), Recorder(), config)
    assert [p["resource_name"] for p in second.stacks.hook_poll("p", "s")] == ["b"]
    second.stacks.hook_clear("p", "s", "b", "pre-create")
    second.store.close()

    third = Env(SQLStore(url), Recorder(), config)
    assert third.wait()["stack_status"] == "CREATE_COMPLETE"
    assert third.rec.ops("create") == [("create", "b"), ("create", "c")]
    third.store.close()


def test_a_clear_from_another_store_wakes_a_running_engine(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hooks.db'}"
    config = EngineConfig(scan_seconds=0.05)
    engine_side = Env(SQLStore(url), Recorder(), config)
    other = Env(SQLStore(url), Recorder(), config)
    create(engine_side, CHAIN, hooks_env(b="pre-create"))
    cleared: list[bool] = []

    def until() -> bool:
        waiting = other.stacks.hook_poll("p", "s")
        if waiting and not cleared:
            other.stacks.hook_clear("p", "s", "b", "pre-create")  # not through this engine
            cleared.append(True)
        return engine_side.status()[0] == "CREATE_COMPLETE"

    engine_side.run_until(until)
    assert cleared and engine_side.resource_status("c") == "CREATE_COMPLETE"
    engine_side.store.close()
    other.store.close()
