"""``set_physical_id(..., commit=False)``: an id that names nothing real is
written with the action's outcome (or the plugin's next durable write),
never lost, and saves the transaction a durable id costs per wave.

On memory, SQLite and PostgreSQL (the ``env`` fixture's stores).
"""

from __future__ import annotations

from typing import Any

from convection.resources.api import ResourceFailure
from convection.resources.testing import Call, fake_type


def _register(env: Any, name: str, then: str) -> None:
    """A type whose create sets a placeholder id, then does ``then``:
    nothing, a durable ``set_data``, or fail."""

    async def handler(call: Call) -> Any:
        if call.op != "create":
            return None
        await call.ctx.set_physical_id(f"placeholder-{call.ctx.resource_name}", commit=False)
        if then == "data":
            await call.ctx.set_data({"seen": call.ctx.physical_id})
        if then == "fail":
            raise ResourceFailure("gave up after naming it")
        return None

    env.registry.register(fake_type(name, handler))


def _stored(env: Any, name: str) -> Any:
    stack = env.store.get_stack("p", "s")
    return next(r for r in env.store.list_resources(stack.id) if r.name == name)


def test_the_id_is_written_with_the_outcome(env: Any) -> None:
    _register(env, "Test::Placeholder", "nothing")
    env.create("resources:\n  a: {type: Test::Placeholder}\n")
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    row = _stored(env, "a")
    assert row.physical_id == "placeholder-a"
    assert env.resources()["a"]["physical_resource_id"] == "placeholder-a"


def test_the_id_is_written_with_the_next_durable_write(env: Any) -> None:
    _register(env, "Test::Placeholder", "data")
    env.create("resources:\n  a: {type: Test::Placeholder}\n")
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    row = _stored(env, "a")
    assert (row.physical_id, row.data) == ("placeholder-a", {"seen": "placeholder-a"})


def test_a_failed_create_keeps_the_id(env: Any) -> None:
    """A re-run (a later update replacing the failed resource) must see the id."""
    _register(env, "Test::Placeholder", "fail")
    env.create("resources:\n  a: {type: Test::Placeholder}\n")
    assert env.wait()["stack_status"] == "CREATE_FAILED"
    row = _stored(env, "a")
    assert (row.status, row.physical_id) == ("FAILED", "placeholder-a")
