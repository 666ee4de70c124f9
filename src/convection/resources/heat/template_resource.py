"""Template resources: a resource whose type is a template file.

``type: web.yaml``, or a registry mapping such as ``OS::Nova::Server:
server.yaml``, makes a nested stack from that template (Heat's
``TemplateResource``): the resource's properties are the nested template's
parameters, its attributes are the nested outputs and, as ``resource.NAME``
and ``resource.NAME.ATTR``, the nested stack's resources; its reference id
is the nested stack's ARN unless an output named ``OS::stack_id`` gives
one (Heat's ``get_reference_id``).

Why not a registered type: the type name is a file of the stack, not a
class. The engine makes one instance per file name when a stack uses it,
carrying the file's text, and validation uses the nested template's own
interface (``template_types``).
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

from convection.common import JSON, Diagnostic, InvalidInput, Path
from convection.hot import load, stack_arn
from convection.resources._context import ResourceContext
from convection.resources._nested import ChildStack
from convection.resources._plugin import Properties, ResourceFailure
from convection.resources._schema import AttributeSchema
from convection.resources._update import UpdateAction, UpdateDecision, changed_properties
from convection.resources.heat.stack_resource import (
    RESOURCE_PREFIX,
    STACK_ID_ATTRIBUTE,
    StackResourcePlugin,
    nested_attribute,
)

#: A property the engine keeps with the others: the template's digest, so a
#: changed template file updates the nested stack even when no property
#: changed (Heat updates it then too). Never passed to the child.
DIGEST_PROPERTY = "__template_digest__"


class TemplateResource(StackResourcePlugin):
    type_name = "OS::Heat::TemplateResource"
    #: The nested template's parameters are checked when the child compiles.
    accepts_anything = True
    #: Set per template file by :func:`template_type`.
    template_name: ClassVar[str] = ""
    text: ClassVar[str | None] = None
    digest: ClassVar[str] = ""

    @classmethod
    def validate(
        cls,
        properties: Any,
        path: Path,
        *,
        strict: bool = True,
        stack_timeout: float | None = None,
    ) -> tuple[dict[str, Any], list[Diagnostic]]:
        values = dict(properties) if isinstance(properties, dict) else {}
        values[DIGEST_PROPERTY] = cls.digest
        return values, []

    @classmethod
    def decide_update(cls, old: Properties, new: Properties) -> UpdateDecision:
        """Heat updates the nested stack in place for any property change."""
        changed = changed_properties(old, new)
        if not changed:
            return UpdateDecision(UpdateAction.NONE, "unchanged")
        return UpdateDecision(UpdateAction.UPDATE, "properties changed: " + ", ".join(changed))

    async def child(self, ctx: ResourceContext, props: Properties) -> ChildStack:
        if self.text is None:
            raise ResourceFailure(
                f'Could not fetch remote template "{self.template_name}": '
                "it is not in the stack's files"
            )
        params = {k: v for k, v in props.items() if v is not None and k != DIGEST_PROPERTY}
        return ChildStack(template=self.text, parameters=params)

    async def reference_id(self, ctx: ResourceContext, props: Properties) -> JSON:
        if ctx.physical_id is None:
            return ctx.resource_name
        outputs = await self.outputs(ctx)
        if outputs.get(STACK_ID_ATTRIBUTE) is not None:
            return outputs[STACK_ID_ATTRIBUTE]
        state = await ctx.nested.state(ctx.physical_id)
        if state is None:
            return ctx.physical_id
        return stack_arn(state.project, state.name, ctx.physical_id)

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        if name.startswith(RESOURCE_PREFIX) and ctx.physical_id is not None:
            return await nested_attribute(ctx, ctx.physical_id, name)
        outputs = await self.outputs(ctx)
        if name in outputs:
            return outputs[name]
        return await super().attribute(ctx, props, name)


_TYPES: dict[tuple[str, str], type[TemplateResource]] = {}


def template_type(name: str, text: str | None) -> type[TemplateResource]:
    """The plugin class for template file ``name`` with this content (one
    class per content, so its digest is known to the class methods that
    decide updates)."""
    digest = "" if text is None else hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    found = _TYPES.get((name, digest))
    if found is None:
        attrs = {
            "template_name": name,
            "text": text,
            "digest": digest,
            "attributes_schema": _output_attributes(name, text),
        }
        found = _TYPES[(name, digest)] = type("TemplateResource", (TemplateResource,), attrs)
    return found


def _output_attributes(name: str, text: str | None) -> dict[str, AttributeSchema]:
    """The nested outputs as the type's declared attributes (Heat's
    TemplateResource builds its attributes schema from them).

    Why declared and not only read on demand: the engine stores a resource's
    declared attributes when its action completes, and a group's member lives
    in a generated child stack that reads none of them, so without this a
    group's ``get_attr`` of a member output finds nothing stored (``None``).
    A file that does not load declares nothing here; creating the child
    reports why."""
    if text is None:
        return {}
    try:
        data = load(text, name).data
    except InvalidInput:
        return {}
    outputs = data.get("outputs", data.get("Outputs"))
    if not isinstance(outputs, dict):
        return {}
    return {str(key): AttributeSchema(_description(value)) for key, value in outputs.items()}


def _description(output: JSON) -> str:
    if not isinstance(output, dict):
        return ""
    found = output.get("description", output.get("Description"))
    return found if isinstance(found, str) else ""
