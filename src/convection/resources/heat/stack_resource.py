"""The base of every resource whose real thing is a child stack.

Heat's ``StackResource``: template resources, ``OS::Heat::Stack`` and the
groups create, update and delete a nested stack and answer attributes from
its outputs. A subclass says only *what* the child is (:meth:`child`); this
base does the rest through ``ctx.nested`` (see ``resources._nested``):

* ``create`` asks for the child (idempotent for the resource version) and
  records its id as the physical id before waiting on anything;
* ``update`` converges the same child in place (Heat updates nested stacks
  rather than replacing them);
* ``delete`` deletes the child; a child already gone is success;
* each ``check_*_complete`` reads the child's state: in progress is
  :class:`Wait` (the engine also wakes the node when the child finishes),
  failed raises :class:`ResourceFailure` with the child's reason, which
  already names the failing resource's path.

Subclasses override :meth:`child` and, when they have more to say,
:meth:`attribute` or :meth:`reference_id`. Keep this class small: groups
build on it.
"""

from __future__ import annotations

import abc
import re
from typing import Any, ClassVar

from convection.common import JSON
from convection.resources._context import ResourceContext
from convection.resources._nested import ChildStack, ChildState
from convection.resources._plugin import Poll, Properties, ResourceFailure, ResourcePlugin, Token
from convection.resources._plugin import Wait as Wait

#: Heat's attribute of every nested-stack resource: the child's id.
STACK_ID_ATTRIBUTE = "OS::stack_id"

#: A child stack's failure reason: "Resource CREATE failed: Error: resources.x: why".
_CHILD_REASON = re.compile(
    r"^Resource \w+ failed: (?P<error>[\w.]+): (?P<path>resources\.\S+?): (?P<message>.*)$",
    re.DOTALL,
)
#: A child's failure reason without a path ("Resource CHECK failed: drift").
_BARE_REASON = re.compile(r"^Resource \w+ failed: (?P<message>.*)$", re.DOTALL)
#: ``get_attr: [owner, resource.NAME...]`` reads the nested stack's resources.
RESOURCE_PREFIX = "resource."


async def nested_attribute(ctx: ResourceContext, stack_id: str, key: str) -> JSON:
    """``resource.NAME`` (that resource's reference id) or ``resource.NAME.ATTR``
    (its attribute ATTR, which may itself be ``resource....`` of a stack it
    owns) of the stack ``stack_id``: Heat's ``grouputils.get_nested_attrs``.
    The rest of a ``get_attr`` path selects from the value, as for any
    attribute. A name the stack lacks reads as nothing."""
    parts = key.split(".", 2)  # ["resource", NAME] or ["resource", NAME, ATTR]
    name = parts[1] if len(parts) > 1 else ""
    rest = parts[2] if len(parts) > 2 else ""
    found = {r.name: r for r in await ctx.nested.resources(stack_id)}.get(name)
    if found is None:
        return None
    if not rest:
        return found.reference_id
    if rest in found.attributes:
        return found.attributes[rest]
    child = found.physical_id
    if child is None or not rest.startswith(RESOURCE_PREFIX):
        return None
    if await ctx.nested.state(child) is None:  # it owns no stack
        return None
    return await nested_attribute(ctx, child, rest)


def nested_failure(state: ChildState) -> ResourceFailure:
    """The child's failure as the owner's, with the path below the owner
    kept (Heat: ``Error: resources.web.resources.server: ...``)."""
    reason = state.reason or f"{state.action} failed"
    found = _CHILD_REASON.match(reason)
    if found is None:
        # A check's drift carries no error type or path: keep its words.
        bare = _BARE_REASON.match(reason)
        return ResourceFailure(bare["message"] if bare else reason)
    return ResourceFailure(found["message"], error=found["error"], path=found["path"])


class StackResourcePlugin(ResourcePlugin):
    """A resource that owns one child stack."""

    #: Poll interval while the child runs. The child's end wakes the node
    #: at once, so this is only the fallback (another engine, a lost wake).
    poll_seconds: ClassVar[float] = 5.0
    #: Heat's StackResource: once the child exists, a failed or interrupted
    #: owner is updated in place (the child's members decide), never
    #: replaced (added for groups, brief C).
    replace_failed: ClassVar[bool] = False

    @abc.abstractmethod
    async def child(self, ctx: ResourceContext, props: Properties) -> ChildStack:
        """What the child stack is for these properties (template, files,
        environment, parameters, timeout). Called on create and update."""

    # -- actions ---------------------------------------------------------------

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        child = await self.child(ctx, props)
        stack_id = await ctx.nested.create(child)
        if ctx.physical_id != stack_id:
            await ctx.set_physical_id(stack_id)
        return stack_id

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._settled(ctx, "CREATE")

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        if ctx.physical_id is None:  # the create never got as far as a child
            return await self.create(ctx, props)
        child = await self.child(ctx, props)
        await ctx.nested.update(ctx.physical_id, child)
        return ctx.physical_id

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._settled(ctx, "UPDATE", "CREATE")

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        if ctx.physical_id is not None:
            await ctx.nested.delete(ctx.physical_id)
        return {"child": ctx.physical_id, "since": ctx.now()}

    async def check_delete_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        if ctx.physical_id is None:
            return True
        state = await ctx.nested.state(ctx.physical_id)
        if state is None or (state.action, state.status) == ("DELETE", "COMPLETE"):
            return True
        verdict = self._judge(state, "DELETE")
        return verdict if verdict is True else self._delete_wait(ctx, token)

    def _delete_wait(self, ctx: ResourceContext, token: Token) -> Wait:
        """A finished child wakes the cleanup node that started its delete
        when the same engine runs both (``NestedHub.owners``); a delete
        taken up by another engine has no such wake, so the poll interval
        grows with the delete's age (O(log t) polls) rather than sleeping a
        whole ``poll_seconds`` for a child that took a second (every poll is a
        job: polled too often, a thousand deletes crowd out the children)."""
        since = token.get("since") if isinstance(token, dict) else None
        if not isinstance(since, int | float):
            return Wait(self.poll_seconds)
        age = max(0.0, ctx.now() - since)
        return Wait(min(self.poll_seconds, max(2.0, age / 2)))

    # Heat's StackResource passes suspend, resume and check down to the
    # child and waits for it, so every grandchild is reached and a drift
    # found deep down fails each owner's check on the way up.

    async def suspend(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._pass_down(ctx, "SUSPEND")

    async def check_suspend_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._settled(ctx, "SUSPEND")

    async def resume(self, ctx: ResourceContext, props: Properties) -> Token:
        return await self._pass_down(ctx, "RESUME")

    async def check_resume_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._settled(ctx, "RESUME")

    async def check(self, ctx: ResourceContext, props: Properties) -> str | None:
        await self._pass_down(ctx, "CHECK")
        return None  # the child's check decides (check_check_complete)

    async def check_check_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return await self._settled(ctx, "CHECK")

    async def _pass_down(self, ctx: ResourceContext, action: str) -> Token:
        if ctx.physical_id is None:  # Heat: "Cannot suspend web, stack not created"
            raise ResourceFailure(f"Cannot {action.lower()} {ctx.resource_name}, stack not created")
        await ctx.nested.act(ctx.physical_id, action)
        return ctx.physical_id

    # -- what others read ------------------------------------------------------

    async def reference_id(self, ctx: ResourceContext, props: Properties) -> JSON:
        """Heat: the child stack's id (a template resource may override it
        with an output named ``OS::stack_id``)."""
        return ctx.physical_id if ctx.physical_id is not None else ctx.resource_name

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        """An output of the child by name; ``OS::stack_id`` is the child's id."""
        if name == STACK_ID_ATTRIBUTE:
            return ctx.physical_id
        outputs = await self.outputs(ctx)
        return outputs.get(name)

    async def outputs(self, ctx: ResourceContext) -> dict[str, Any]:
        """The child's stored outputs ({} before there is a child)."""
        if ctx.physical_id is None:
            return {}
        return dict(await ctx.nested.outputs(ctx.physical_id))

    # -- helpers -----------------------------------------------------------------

    async def _settled(self, ctx: ResourceContext, *actions: str) -> Poll:
        if ctx.physical_id is None:
            raise ResourceFailure("the nested stack was never created")
        state = await ctx.nested.state(ctx.physical_id)
        if state is None:
            raise ResourceFailure(f"the nested stack {ctx.physical_id} is gone")
        return self._judge(state, *actions)

    def _judge(self, state: ChildState, *actions: str) -> Poll:
        """Done, not yet, or the child's failure as this resource's."""
        if state.in_progress:
            return Wait(self.poll_seconds)
        if state.failed:
            raise nested_failure(state)
        if state.action not in actions:
            return Wait(self.poll_seconds)  # the action asked for has not begun yet
        return True
