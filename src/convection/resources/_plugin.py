"""The resource plugin: what a resource type does for each action.

Why a small base class rather than a bare Protocol: every Heat type leaves
most actions undefined (no suspend, no signal, an instant check), and a base
gives those Heat's defaults in one place so each type writes only what it
does. The base is deliberately *not* Heat's ``Resource``: it holds no state,
reads no stack, persists and locks nothing, and never schedules. Plugins are
stateless; an instance is cheap and carries nothing between calls. Everything
a plugin learns or remembers goes through the :class:`ResourceContext`, and
the engine owns ordering, timers, leases and the store.

The action methods come in pairs, as in Heat: ``create`` starts the work and
returns a small JSON-able *token*; the engine stores the token with a timer
and calls ``check_create_complete`` with it until that says done. The token
and ``data`` survive a restart; nothing else does.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, ClassVar

from convection.common import JSON, ConvectionError, Diagnostic, Path, Severity
from convection.resources._context import ResourceContext
from convection.resources._schema import BASE_ATTRIBUTES, AttributeSchema, PropertySchema
from convection.resources._update import (
    UpdateAction,
    UpdateDecision,
    changed_properties,
    needs_replace,
)
from convection.resources._validate import validate_properties

#: What an action method hands to its ``check_*_complete``: small, JSON-able.
Token = JSON
#: Resolved property values, as :func:`validate_properties` returns them.
Properties = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Wait:
    """A poll result: not done; poll again in about ``seconds``.

    It is falsy, so ``if await plugin.check_create_complete(...)`` still
    reads as "done?". Returning plain ``False`` lets the engine pick the
    interval.
    """

    seconds: float

    def __bool__(self) -> bool:
        return False


#: ``True`` when done; ``False`` or :class:`Wait` when not yet.
Poll = bool | Wait


@dataclass(frozen=True, slots=True)
class SignalPeer:
    """A signal handler's answer: deliver ``details`` to another resource of
    the same stack next, as ``stack resource signal`` would (a scaling
    policy adjusting its group). The service does the delivery, so a plugin
    never reaches into another resource, and the API's signal URL needs
    nothing more than ``Stacks.signal``."""

    resource: str
    details: Mapping[str, JSON]


class ResourceFailure(ConvectionError):
    """The action failed; the resource goes to ``<ACTION>_FAILED`` with this reason.

    Any other exception from a plugin fails the action too; this one says
    the message is meant for the user.
    """

    def __init__(self, message: str, *, error: str = "Error", path: str = "") -> None:
        self.message = message
        #: Heat's error type and the path below this resource where the
        #: failure happened (``resources.server`` in a nested stack), so
        #: the reason reads ``Error: resources.web.resources.server: ...``.
        self.error = error
        self.path = path
        super().__init__(message)

    def __repr__(self) -> str:
        return f"ResourceFailure({self.message!r})"


class ActionNotSupported(ConvectionError):
    """The type does not implement an optional action (``check``, ``signal``)."""

    def __init__(self, type_name: str, action: str) -> None:
        self.type_name = type_name
        self.action = action
        super().__init__(f"{action} not supported for {type_name}")

    def __repr__(self) -> str:
        return f"ActionNotSupported({self.type_name!r}, {self.action!r})"


class ResourcePlugin(abc.ABC):
    """One resource type. Subclasses set the class attributes and override
    the actions they implement; the defaults are Heat's for a missing handler
    (nothing to do, done at once).
    """

    #: The template ``type`` this plugin implements, e.g. ``OS::Heat::None``.
    type_name: ClassVar[str]
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = MappingProxyType({})
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = MappingProxyType({})
    #: Attributes masked in ``resource show`` (none of Heat's own types has
    #: one: Heat masks no attribute). An output the template writes shows
    #: them, as Heat shows every output.
    secret_attributes: ClassVar[frozenset[str]] = frozenset()
    #: Take any properties and offer any attribute (OS::Heat::None).
    accepts_anything: ClassVar[bool] = False
    #: Every stack update visits the resource, changed or not, and asks
    #: :meth:`decide_update` (Heat calls such a type's ``update`` always:
    #: OS::Heat::UpdateWaitConditionHandle replaces itself there).
    visit_on_update: ClassVar[bool] = False
    #: Heat's ``needs_replace_failed``: the next update replaces a resource
    #: left FAILED or interrupted. A nested stack's owner says False (Heat's
    #: StackResource): its child is updated in place and each member decides
    #: for itself, so a failed rolling update is not rebuilt from scratch.
    replace_failed: ClassVar[bool] = True
    #: A signal changes what the attributes read (OS::Mistral::Workflow's
    #: ``executions``), so the service reads and stores them again after
    #: delivering one; others keep those of their last action.
    signal_updates_attributes: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Check the declaration once, at import, and freeze the schemas: a
        type is shared by every stack, so nobody may edit its schema later."""
        super().__init_subclass__(**kwargs)
        for name, prop in cls.properties_schema.items():
            if not isinstance(prop, PropertySchema):
                raise TypeError(f"{cls.__qualname__}: property {name} is not a PropertySchema")
        for name, attr in cls.attributes_schema.items():
            if not isinstance(attr, AttributeSchema):
                raise TypeError(f"{cls.__qualname__}: attribute {name} is not an AttributeSchema")
        unknown = cls.secret_attributes - set(cls.attributes_schema)
        if unknown:
            raise TypeError(f"{cls.__qualname__}: secret attributes {sorted(unknown)} not declared")
        cls.properties_schema = MappingProxyType(dict(cls.properties_schema))
        cls.attributes_schema = MappingProxyType(dict(cls.attributes_schema))

    # -- static: validation and update decisions (pure, no context) --------

    @classmethod
    def validate(
        cls,
        properties: Any,
        path: Path,
        *,
        strict: bool = True,
        stack_timeout: float | None = None,
    ) -> tuple[dict[str, Any], list[Diagnostic]]:
        """Check a resource's properties: the schema, then the type's own rules.

        ``path`` locates the properties section. Returns the coerced values
        and every problem. ``stack_timeout`` (seconds) lets a type refuse
        waits that could never finish in time. Unless ``strict``, the type's
        own rules are warnings: Heat's template-validate runs only
        ``Resource.validate_template``, never the type's ``validate()``
        (``validate_res_tmpl_only`` in heat/engine/stack.py), so what those
        rules find is first refused at create.
        """
        if cls.accepts_anything:
            return (dict(properties) if isinstance(properties, Mapping) else {}), []
        values, diags = validate_properties(cls.properties_schema, properties, path, strict=strict)
        if not any(d.is_error for d in diags):
            rules = cls.validate_values(values, path, strict=strict, stack_timeout=stack_timeout)
            diags.extend(rules if strict else [_as_warning(d) for d in rules])
        return values, diags

    @classmethod
    def validate_values(
        cls,
        values: Properties,
        path: Path,
        *,
        strict: bool,
        stack_timeout: float | None,
    ) -> list[Diagnostic]:
        """Rules across properties, run when the schema found no error.

        Values may still hold unresolved functions; skip what you cannot know.
        """
        return []

    @classmethod
    def decide_update(cls, old: Properties, new: Properties) -> UpdateDecision:
        """How to go from ``old`` to ``new``: Heat's schema rule plus
        :meth:`replace_reason`. The plan asks this; so does the engine once
        values are resolved."""
        decision = needs_replace(cls.properties_schema, old, new)
        if decision.action in (UpdateAction.UPDATE, UpdateAction.REPLACE):
            reason = cls.replace_reason(frozenset(changed_properties(old, new)), old, new)
            if reason is not None:
                return UpdateDecision(UpdateAction.REPLACE, reason)
        return decision

    @classmethod
    def replace_reason(
        cls, changed: frozenset[str], old: Properties, new: Properties
    ) -> str | None:
        """Heat's ``needs_replace_with_prop_diff``: a reason to replace even
        though every changed property is update_allowed, or ``None``."""
        return None

    @classmethod
    def attribute_names(cls) -> frozenset[str] | None:
        """Names ``get_attr`` may use; ``None`` means any name."""
        if cls.accepts_anything:
            return None
        return frozenset(cls.attributes_schema) | frozenset(BASE_ATTRIBUTES)

    # -- actions ------------------------------------------------------------

    @abc.abstractmethod
    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        """Make the thing. Must be safe to call again after a crash."""

    async def check_create_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return True

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        """Apply ``props`` in place; ``ctx.previous_properties`` holds the old
        values. Only called when :meth:`decide_update` said UPDATE."""
        return None

    async def check_update_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return True

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        """Remove the thing. A thing already gone is success, not failure."""
        return None

    async def check_delete_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return True

    async def check(self, ctx: ResourceContext, props: Properties) -> str | None:
        """Drift check: ``None`` when the thing is as expected, else why not.

        Heat's default when a type has no check: it is not supported, and the
        resource stays as it was.
        """
        raise ActionNotSupported(self.type_name, "CHECK")

    async def check_check_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        """Wait for a check that :meth:`check` started elsewhere (Heat's
        StackResource checks its child stack); raise
        :class:`ResourceFailure` for drift found there. ``token`` is None."""
        return True

    async def suspend(self, ctx: ResourceContext, props: Properties) -> Token:
        return None

    async def check_suspend_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return True

    async def resume(self, ctx: ResourceContext, props: Properties) -> Token:
        return None

    async def check_resume_complete(
        self, ctx: ResourceContext, props: Properties, token: Token
    ) -> Poll:
        return True

    async def signal(
        self, ctx: ResourceContext, props: Properties, details: JSON
    ) -> str | SignalPeer | None:
        """Handle a signal sent to the resource; may return a short detail
        for the signal's event (Heat's ``Signal: <detail>``), or a
        :class:`SignalPeer` to pass a signal on. Delivery may be
        repeated with the same ``ctx.operation_id``: make it idempotent."""
        raise ActionNotSupported(self.type_name, "Signal")

    async def reset(self, ctx: ResourceContext, props: Properties) -> None:
        """Forget what this resource was told (signals), because the
        resource that read it was deleted and asked, with
        ``ctx.reset_peer``, as Heat's WaitCondition empties its handle.
        The plugin edits only its own ``data``; the engine only relays the
        request. May be called again for the same request after a crash:
        make it idempotent. Default: nothing to forget."""
        return None

    # -- what other resources and outputs see ------------------------------

    async def reference_id(self, ctx: ResourceContext, props: Properties) -> JSON:
        """``get_resource``: Heat's rule, the physical id once there is one,
        else the logical name."""
        return ctx.physical_id if ctx.physical_id is not None else ctx.resource_name

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        """``get_attr``: the value of one attribute, read from ``data`` or
        ``props``. Called when an action completes; the engine stores the
        result, so outputs never call plugins again."""
        return None


def _as_warning(diag: Diagnostic) -> Diagnostic:
    """A type rule's finding as template-validate reports it (see
    :meth:`ResourcePlugin.validate`): shown, but not a refusal."""
    return replace(diag, severity=Severity.WARNING)
