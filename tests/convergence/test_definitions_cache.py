"""The engine keeps only the compiled definitions a later operation may use.

A 10,000-resource definition holds its template's data and source map
(about 15 MB); the cache's LRU bound alone kept several per stack alive
for the life of a long-running service.
"""

from __future__ import annotations

from convection.convergence.templates import Definitions

from .conftest import Env

ONE = """
resources:
  a: {type: Test::Rec, properties: {value: one}}
"""
TWO = """
resources:
  a: {type: Test::Rec, properties: {value: two}}
"""


def cached(env: Env) -> set[tuple[int, str]]:
    definitions: Definitions = env.stacks.engine.definitions
    return set(definitions._cache)


def test_a_completed_update_drops_the_template_it_replaced(env: Env) -> None:
    stack_id = env.create(ONE)
    env.wait()
    first = env.store.get_stack_by_id(stack_id)
    assert first is not None and first.template_id is not None
    env.update(TWO)
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    now = env.store.get_stack_by_id(stack_id)
    assert now is not None
    assert cached(env) == {(now.template_id, stack_id)}


def test_a_failed_update_keeps_the_rollback_target(env: Env) -> None:
    stack_id = env.create(ONE)
    env.wait()
    env.rec.fail[("update", "a")] = "refused"
    env.update(TWO)
    assert env.wait()["stack_status"] == "UPDATE_FAILED"
    now = env.store.get_stack_by_id(stack_id)
    assert now is not None and now.prev_template_id is not None
    assert cached(env) == {(now.template_id, stack_id), (now.prev_template_id, stack_id)}


def test_a_completed_delete_drops_them_all(env: Env) -> None:
    stack_id = env.create(ONE)
    env.wait()
    env.stacks.delete("p", "s")
    assert env.stacks.wait(stack_id, timeout=60)["stack_status"] == "DELETE_COMPLETE"
    assert not {key for key in cached(env) if key[1] == stack_id}


def test_retain_leaves_other_stacks_alone() -> None:
    definitions = Definitions(size=8)
    for template_id, stack_id in ((1, "a"), (2, "a"), (3, "b")):
        definitions.put(template_id, stack_id, object())  # type: ignore[arg-type]
    definitions.retain("a", (2,))
    assert set(definitions._cache) == {(2, "a"), (3, "b")}
