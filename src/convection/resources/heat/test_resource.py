"""OS::Heat::TestResource: a resource with knobs, for testing stacks.

Its schema is Heat's, property for property. Its behaviour is Heat's too:

* it stores ``value`` (the ``output`` attribute) unless ``fail`` is set;
* every action waits ``action_wait_secs.<action>`` seconds, or ``wait_secs``
  (a negative wait never ends); once the wait is over, ``fail`` fails the
  create or update (never the delete) with "Test Resource failed <name>";
* a changed ``value`` is replaced rather than updated when ``update_replace``
  is true, and any change to ``update_replace_value`` always replaces;
* an update waits only when ``value`` changed to something non-empty (Heat
  reads the new value from the diff, so an empty one counts as no change).

What differs, and why:

* waits are deadlines polled by the engine's timers, never sleeps;
* ``attr_wait_secs`` (Heat sleeps while resolving ``output``) lengthens the
  create and update waits instead: Convection stores attributes when an
  action completes, which is where a slow attribute delays a Heat
  convergence stack too;
* ``constraint_prop_secs`` is accepted and checked by the ``test_constr``
  custom constraint, which accepts every value at once (validation is pure
  and never sleeps);
* ``client_name`` and ``entity_name`` are accepted and ignored: there are
  no OpenStack clients to poll.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from convection.common import JSON
from convection.hot import (
    CustomConstraint,
    custom_constraint_names,
    register_custom_constraint,
)
from convection.resources._context import ResourceContext
from convection.resources._plugin import (
    Poll,
    Properties,
    ResourceFailure,
    ResourcePlugin,
    Token,
    Wait,
)
from convection.resources._schema import AttributeSchema, PropertySchema, PropertyType

if "test_constr" not in custom_constraint_names():
    register_custom_constraint("test_constr", lambda value: True)


def _number(description: str, default: float | None = None) -> PropertySchema:
    return PropertySchema(
        type=PropertyType.NUMBER, description=description, default=default, update_allowed=True
    )


def _string(description: str, default: str) -> PropertySchema:
    return PropertySchema(
        type=PropertyType.STRING, description=description, default=default, update_allowed=True
    )


def _flag(description: str) -> PropertySchema:
    return PropertySchema(
        type=PropertyType.BOOLEAN, description=description, default=False, update_allowed=True
    )


def _after(action: str) -> PropertySchema:
    return _number(f"Seconds to wait after a {action}. Defaults to the global wait_secs.")


class TestResource(ResourcePlugin):
    __test__ = False  # not a pytest test class, despite the name

    type_name = "OS::Heat::TestResource"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "constraint_prop_secs": PropertySchema(
            type=PropertyType.NUMBER,
            description="Number value for delay during resolve constraint.",
            default=0,
            update_allowed=True,
            constraints=(CustomConstraint("test_constr"),),
        ),
        "attr_wait_secs": _number(
            "Number value for timeout during resolving output value.", default=0
        ),
        "value": _string("The input string to be stored.", "test_string"),
        "update_replace_value": PropertySchema(
            type=PropertyType.STRING,
            description="Some value that can be stored but can not be updated.",
        ),
        "fail": _flag(
            "Value which can be set to fail the resource operation to test failure scenarios."
        ),
        "update_replace": _flag(
            "Value which can be set to trigger update replace for the particular resource."
        ),
        "wait_secs": _number("Seconds to wait after an action (-1 is infinite).", default=0),
        "action_wait_secs": PropertySchema(
            type=PropertyType.MAP,
            description="Options for simulating waiting.",
            update_allowed=True,
            schema={action: _after(action) for action in ("create", "update", "delete")},
        ),
        "client_name": _string("Client to poll.", ""),
        "entity_name": _string("Client entity to poll.", ""),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "output": AttributeSchema(
            "The string that was stored. This value is also available by referencing the resource."
        ),
    }

    @classmethod
    def replace_reason(
        cls, changed: frozenset[str], old: Properties, new: Properties
    ) -> str | None:
        if "value" in changed and new.get("update_replace") is True:
            return "property value changed and update_replace is true"
        return None

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        data = dict(ctx.data)
        if not props["fail"]:
            data["value"] = props["value"]
        token = _token(ctx, props, "create")
        data["wait"] = token
        if data != ctx.data:
            await ctx.set_data(data)
        if not props["fail"] and ctx.physical_id is None:
            await ctx.set_physical_id(ctx.physical_resource_name)
        return token

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _poll(ctx, props, token, may_fail=True)

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        old = ctx.previous_properties or {}
        value = props["value"]
        data = dict(ctx.data)
        if value != old.get("value") and value:
            if not props["fail"]:
                data["value"] = value
            token = _token(ctx, props, "update")
        else:
            token = _token(ctx, props, "update", seconds=0)
        data["wait"] = token
        if data != ctx.data:
            await ctx.set_data(data)
        return token

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _poll(ctx, props, token, may_fail=True)

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        token = _token(ctx, props, "delete")
        if ctx.data.get("wait") != token:
            await ctx.set_data({**ctx.data, "wait": token})
        return token

    async def check_delete_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return _poll(ctx, props, token, may_fail=False)

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        return ctx.data.get("value") if name == "output" else None


def wait_seconds(props: Properties, action: str) -> float:
    """Heat's rule: the per-action wait when set, else ``wait_secs``."""
    per_action = props.get("action_wait_secs")
    seconds: Any = per_action.get(action) if isinstance(per_action, Mapping) else None
    if seconds is None:
        seconds = props.get("wait_secs") or 0
    return float(seconds)


def _token(
    ctx: ResourceContext, props: Properties, action: str, seconds: float | None = None
) -> dict[str, JSON]:
    """The wait for this operation: the one already recorded when this is a
    re-run after a crash, else a new one starting now."""
    stored = ctx.data.get("wait")
    if isinstance(stored, Mapping) and stored.get("operation") == ctx.operation_id:
        return dict(stored)
    wait = wait_seconds(props, action) if seconds is None else seconds
    if wait >= 0 and action != "delete":
        wait += float(props.get("attr_wait_secs") or 0)
    return {"operation": ctx.operation_id, "action": action, "started": ctx.now(), "wait": wait}


def _poll(ctx: ResourceContext, props: Properties, token: Token, *, may_fail: bool) -> Poll:
    if not isinstance(token, Mapping):
        return True
    wait = float(token["wait"])
    if wait < 0:
        return False  # a negative wait never ends; the engine's timeout does
    remaining = float(token["started"]) + wait - ctx.now()
    if remaining > 0:
        return Wait(remaining)
    if may_fail and props.get("fail"):
        raise ResourceFailure(f"Test Resource failed {ctx.resource_name}")
    return True
