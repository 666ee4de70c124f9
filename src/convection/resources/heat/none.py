"""OS::Heat::None: a stand-in that accepts anything and does nothing.

Mapping a type to OS::Heat::None in an environment's resource_registry
disables a resource without editing the template, so it must take whatever
properties the real type took and answer any ``get_attr`` (with null). As in
Heat, it never updates: a property change that would have replaced the real
resource leaves the stand-in alone.
"""

from __future__ import annotations

import uuid

from convection.resources._context import ResourceContext
from convection.resources._plugin import Properties, ResourcePlugin, Token
from convection.resources._update import UpdateAction, UpdateDecision


class NoneResource(ResourcePlugin):
    type_name = "OS::Heat::None"
    accepts_anything = True

    @classmethod
    def decide_update(cls, old: Properties, new: Properties) -> UpdateDecision:
        return UpdateDecision(UpdateAction.NONE, f"{cls.type_name} never updates")

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        # A random id, as Heat uses; kept if a re-run finds one already stored.
        if ctx.physical_id is None:
            await ctx.set_physical_id(str(uuid.uuid4()), commit=False)
        return None
