"""The child stacks of a compiled stack's resources, built without running
anything: what template validate's ``show_nested`` and an update preview's
``show_nested`` look into.

Heat builds these as ``StackResource`` does (``get_nested_parameters_stack``
for validate, ``preview`` for previews): the resource's properties are
resolved with what is known (parameters; a resource not created yet
answers ``get_resource`` with its name and ``get_attr`` with null), the
plugin says what its child is (each plugin's own ``child``, the one the
engine calls), and the child compiles with the owner's environment as
Heat's ``get_child_environment`` gives it: the registry (narrowed to the
owner's per-resource settings, minus the entry that mapped this template
resource) and ``parameter_defaults``, never the owner's parameters.

``OS::Heat::Stack`` has no child here: Heat's is a remote stack, not a
nested one, and neither validate nor a preview looks into it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from convection.common import JSON, ExpressionError, InvalidInput, Limits
from convection.hot import (
    Document,
    SourceMap,
    is_template_name,
    load,
    resolve,
)
from convection.model import (
    Compiled,
    StackDefinition,
    StackIdentity,
    StackInputs,
    child_environment,
    compile_stack,
    path_value,
)
from convection.plan import (
    Action,
    Change,
    Plan,
    Stored,
    always_updated,
    build_plan,
    preview,
    reference_id,
    stored_entries,
)
from convection.resources import (
    ChildStack,
    InMemoryContext,
    ResourcePlugin,
    TypeRegistry,
    template_type,
)
from convection.store import ResourceRecord, StackRecord, Store

#: Heat's ``OS::Heat::Stack`` is a remote stack: no nested parameters, no
#: nested preview.
REMOTE_STACK = "OS::Heat::Stack"

#: Groups Heat sizes to one member for validate's nested parameters (its
#: ``get_nested_parameters_stack``), and the property that sets the size.
_ONE_MEMBER = {
    "OS::Heat::ResourceGroup": "count",
    "OS::Heat::AutoScalingGroup": "desired_capacity",
}

Lookup = Callable[[str], ResourceRecord | None]


@dataclass(frozen=True, slots=True)
class ChildInputs:
    """A resource's child stack, ready to compile."""

    inputs: StackInputs
    identity: StackIdentity


def plugin_class(
    registry: TypeRegistry, definition: StackDefinition, type_name: str
) -> type[ResourcePlugin] | None:
    found = registry.get(type_name)
    if found is None and is_template_name(type_name):
        return template_type(type_name, definition.template.files.get(type_name))
    return found


def child_inputs(
    definition: StackDefinition,
    name: str,
    registry: TypeRegistry,
    identity: StackIdentity,
    *,
    lookup: Lookup | None = None,
    data: Mapping[str, JSON] | None = None,
    one_member: bool = False,
    limits: Limits,
) -> ChildInputs | None:
    """The child stack of resource ``name``, or None when it has none (or
    it cannot be worked out: its properties do not validate, or its
    template does not load, which the stack's own validation reports).

    ``lookup`` finds stored resources (an update preview); ``data`` is the
    resource's stored data (a group's removed names); ``one_member`` sizes
    groups to one member, as validate does."""
    rdef = definition.resources[name]
    plugin = plugin_class(registry, definition, rdef.resolved_type)
    child_of = getattr(plugin, "child", None) if plugin is not None else None
    if plugin is None or child_of is None or plugin.type_name == REMOTE_STACK:
        return None
    path = ("resources", name, "properties")
    values, diags = plugin.validate(
        _properties(rdef.properties, _Known(definition, lookup)), path, strict=False
    )
    if any(d.is_error for d in diags):
        return None
    size_key = _ONE_MEMBER.get(plugin.type_name)
    if one_member and size_key is not None:
        values = {**values, size_key: 1}
    ctx = InMemoryContext(
        resource_name=name,
        stack_name=definition.parameters.identity[0],
        stack_id=definition.parameters.identity[1],
        data=dict(data or {}),
        operation_id=f"preview-{name}",
    )
    try:
        child = _run_now(plugin().child(ctx, values))  # type: ignore[attr-defined]
    except Exception:  # a plugin that cannot say without running: no child shown
        return None
    if not isinstance(child, ChildStack):
        return None
    try:
        doc = _document(child.template, rdef.resolved_type, limits)
    except InvalidInput:
        return None
    files = dict(definition.template.files)
    files.update(child.files)
    envs = [child_environment(definition, name)]
    if child.environment:
        envs.append(Document("environment", dict(child.environment), SourceMap("environment")))
    # Heat's template resource passes on the properties its schema has, and
    # that schema is the child template's parameters: others never arrive.
    declared = doc.data.get("parameters") if isinstance(doc.data, dict) else None
    params = {
        k: _parameter_value(v)
        for k, v in child.parameters.items()
        if isinstance(declared, dict) and k in declared
    }
    return ChildInputs(StackInputs(doc, tuple(envs), files, params), identity)


def compile_child(
    child: ChildInputs, registry: TypeRegistry, limits: Limits, *, checked: bool = True
) -> Compiled | None:
    """The child compiled without requiring parameter values (Heat's
    non-strict validation), or None when it does not compile. Unless
    ``checked``, its resources' types and properties are not checked
    either: Heat's ``get_nested_parameters`` only reads a child's
    parameters and resources."""
    try:
        return compile_stack(
            child.inputs,
            identity=child.identity,
            catalog=registry.catalog(strict=False) if checked else None,
            strict=False,
            limits=limits,
        )
    except InvalidInput:
        return None


def _document(template: Mapping[str, Any] | str, name: str, limits: Limits) -> Document:
    label = name if is_template_name(name) else "template"
    if isinstance(template, str):
        return load(template, label, limits=limits)
    return Document(label, dict(template), SourceMap(label))


def _parameter_value(value: Any) -> Any:
    """A property value as Heat's ``TemplateResource.child_params`` passes it
    on: a list becomes a comma-delimited string (an empty one, "")."""
    if isinstance(value, list) and not any(isinstance(v, dict) for v in value):
        return ",".join("" if v is None else str(v) for v in value)
    return value


def _properties(snippet: Any, resolver: _Known) -> Any:
    """Each property resolved on its own; one that cannot be (a function
    given nothing yet) is left out, as Heat reads it as unset then."""
    if not isinstance(snippet, dict):
        try:
            return resolve(snippet, resolver)
        except (ExpressionError, KeyError, TypeError, ValueError):
            return {}
    out: dict[str, Any] = {}
    for key, value in snippet.items():
        try:
            found = resolve(value, resolver)
        except (ExpressionError, KeyError, TypeError, ValueError):
            continue
        if found is not None:
            out[key] = found
    return out


class _Known:
    """A resolver over what is known before anything runs: parameters, and
    stored resources when there are any."""

    __slots__ = ("_definition", "_lookup")

    def __init__(self, definition: StackDefinition, lookup: Lookup | None) -> None:
        self._definition = definition
        self._lookup = lookup

    def _row(self, name: str) -> ResourceRecord | None:
        return None if self._lookup is None else self._lookup(name)

    def parameter(self, name: str) -> Any:
        return self._definition.parameters.value(name)

    def resource_id(self, name: str) -> Any:
        row = self._row(name)
        return name if row is None else reference_id(row)

    def attribute(self, resource: str, name: str | None) -> Any:
        row = self._row(resource)
        if row is None:
            return None
        if name is None:
            return dict(row.attributes)
        return path_value(row.type, name, row.attributes)

    def file(self, name: str) -> str | None:
        return self._definition.template.files.get(name)

    def facade(self, section: str) -> NoReturn:
        raise ExpressionError("resource_facade is only valid in a nested stack's template")


def _run_now(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """A coroutine that never waits, run to its end here and now (a
    plugin's ``child`` is plain computation)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("child() waited on something")


class NestedPreview:
    """Heat's ``preview_update_stack`` with ``show_nested``: the changes
    inside nested stacks, added to the owner's buckets.

    As Heat's recursion: the stored children of deleted and replaced
    resources are listed as deleted, all the way down; the children of
    added and replaced ones (built from the new definition) as added; and
    for a resource updated in place, its stored child is previewed against
    its new child, bucket by bucket, and that preview recursed into. An
    owner is updated whether or not anything of it changed (Heat's
    ``StackResource._needs_update``; see :func:`convection.plan.always_updated`),
    so an unchanged owner's child is previewed too; a resource left
    unchanged that is no owner has no child to show. Each nested entry names
    its stack (``stack_name``, ``stack_identity``) and the resource that
    owns it (``parent_resource``)."""

    __slots__ = ("_limits", "_registry", "_store")

    def __init__(self, store: Store, registry: TypeRegistry, limits: Limits) -> None:
        self._store = store
        self._registry = registry
        self._limits = limits

    def extend(
        self,
        out: dict[str, list[dict[str, Any]]],
        plan: Plan,
        definition: StackDefinition | None,
        stored: Sequence[ResourceRecord],
        stack: StackRecord,
        depth: int = 0,
    ) -> None:
        if depth >= self._limits.max_nested_stack_depth:
            return
        current = Stored.split(stored).current
        for change in plan.changes:
            row = current.get(change.name)
            if change.action in _GONE and row is not None:
                why = "deleted" if change.action is Action.DELETE else "replaced"
                self._listed(out, "deleted", row, stack, f"its owner {change.name} is {why}", depth)
            if definition is None or change.name not in definition.resources:
                continue
            if change.action in _NEW:
                self._added(out, definition, change.name, stack.name, stack.project, current, depth)
            elif row is not None and self._previewed(change):
                self._updated(out, definition, row, stack, current, depth)
            elif change.action is Action.NOOP and row is not None:
                reason = f"its owner {change.name} is unchanged"
                self._listed(out, "unchanged", row, stack, reason, depth)

    def _previewed(self, change: Change) -> bool:
        """Whether the change updates the resource's child in Heat's eyes."""
        if change.action in _CHANGED:
            return True
        return change.action is Action.NOOP and always_updated(change.type, self._registry)

    def _child_stack(self, row: ResourceRecord, owner: StackRecord) -> StackRecord | None:
        """The stored child stack of ``row``, if it has one."""
        if row.physical_id is None:
            return None
        child = self._store.get_stack_by_id(row.physical_id)
        if child is None or child.parent_id != owner.id or child.parent_resource != row.name:
            return None
        if (child.action, child.status) == ("DELETE", "COMPLETE"):
            return None
        return child

    def _listed(
        self,
        out: dict[str, list[dict[str, Any]]],
        bucket: str,
        row: ResourceRecord,
        owner: StackRecord,
        reason: str,
        depth: int,
    ) -> None:
        """Every stored resource under ``row``'s child, in ``bucket``."""
        child = self._child_stack(row, owner)
        if child is None or depth >= self._limits.max_nested_stack_depth:
            return
        rows = self._store.list_resources(child.id)
        out[bucket].extend(
            _owned(stored_entries(rows, reason, stack_name=child.name, stack_id=child.id), row.name)
        )
        for nested in Stored.split(rows).current.values():
            self._listed(out, bucket, nested, child, reason, depth + 1)

    def _added(
        self,
        out: dict[str, list[dict[str, Any]]],
        definition: StackDefinition,
        name: str,
        owner_name: str,
        project: str,
        current: Mapping[str, ResourceRecord],
        depth: int,
    ) -> None:
        """The child a new resource would make, all of it added."""
        if depth >= self._limits.max_nested_stack_depth:
            return
        identity = StackIdentity(f"{owner_name}-{name}", "None", project)
        child = child_inputs(
            definition, name, self._registry, identity, lookup=current.get, limits=self._limits
        )
        compiled = None if child is None else self._compile(child)
        if compiled is None:
            return
        nested = compiled.definition
        plan = build_plan(nested, [], self._registry, operation="CREATE")
        shown = preview(plan, nested, [], stack_name=identity.name)
        out["added"].extend(_owned(shown["added"], name))
        for member in nested.resources:
            self._added(out, nested, member, identity.name, project, {}, depth + 1)

    def _updated(
        self,
        out: dict[str, list[dict[str, Any]]],
        definition: StackDefinition,
        row: ResourceRecord,
        owner: StackRecord,
        current: Mapping[str, ResourceRecord],
        depth: int,
    ) -> None:
        """A stored child against the child the new definition makes."""
        stack = self._child_stack(row, owner)
        if stack is None:
            return
        identity = StackIdentity(stack.name, stack.id, stack.project)
        child = child_inputs(
            definition,
            row.name,
            self._registry,
            identity,
            lookup=current.get,
            data=row.data,
            limits=self._limits,
        )
        compiled = None if child is None else self._compile(child)
        if compiled is None:
            return
        rows = self._store.list_resources(stack.id)
        nested = compiled.definition
        plan = build_plan(nested, rows, self._registry, operation="UPDATE")
        shown = preview(
            plan, nested, rows, stack_name=stack.name, stack_id=stack.id, schemas=self._registry
        )
        for bucket, entries in shown.items():
            out[bucket].extend(_owned(entries, row.name))
        self.extend(out, plan, nested, rows, stack, depth + 1)

    def _compile(self, child: ChildInputs) -> Compiled | None:
        return compile_child(child, self._registry, self._limits)


#: Plan actions whose stored resource goes (with its child), whose new
#: resource makes a child, and whose child is updated in place.
_GONE = frozenset({Action.DELETE, Action.REPLACE, Action.RESTORE})
_NEW = frozenset({Action.CREATE, Action.REPLACE, Action.RESTORE})
_CHANGED = frozenset({Action.UPDATE, Action.EVALUATE})


def _owned(entries: Sequence[dict[str, Any]], owner: str) -> list[dict[str, Any]]:
    """Entries of a nested stack, naming the resource that owns it (Heat's
    ``parent_resource``)."""
    return [{**e, "parent_resource": owner} for e in entries]
