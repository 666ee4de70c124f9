"""Template + environment + parameter values → a :class:`StackDefinition`.

This is the last pure step before planning. Conditions are evaluated here,
macros (``if``) expanded, resources switched off by their condition dropped,
and every reference checked against the resources that remain, so the
definition's dependency sets are exact and the graph needs no template.

Nothing here knows what a resource type does. Type existence and property
schemas come from a :class:`TypeCatalog` the caller passes in.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from convection.common import ConvectionError, Diagnostic, Diagnostics, ExpressionError, Path
from convection.hot import (
    Conditions,
    Environment,
    Function,
    OutputSnippet,
    ParameterValues,
    ResourceSnippet,
    Template,
    TemplateVersion,
    computed_references,
    functions,
    is_template_name,
)
from convection.model._values import PropertyValues, masked

_POLICY_NAMES = {"delete": "Delete", "retain": "Retain", "snapshot": "Snapshot"}


class TypeInfo(Protocol):
    """What validation needs to know about a resource type."""

    @property
    def attribute_names(self) -> Collection[str] | None: ...

    def validate_properties(self, properties: Any, path: Path, diags: Diagnostics) -> None: ...


class TypeCatalog(Protocol):
    def lookup(self, type_name: str) -> TypeInfo | None: ...


@runtime_checkable
class Provider(Protocol):
    """A type a template implements (Heat's TemplateResource): when it
    stands in for a class type, its facade, it is checked against it."""

    def validate_facade(
        self, facade: TypeInfo, name: str, path: Path, diags: Diagnostics
    ) -> None: ...


#: Functions Heat's output validation does not resolve (``OutputDefinition
#: .validate`` runs each function's ``validate``, and these have none): a
#: parameter or resource they name that is not there is the output's
#: ``output_error`` when it is shown, never a template error.
_UNCHECKED_IN_OUTPUTS = frozenset({"get_param", "get_resource", "Ref"})
#: ``get_attr`` looks its resource up when validated (``GetAttThenSelect
#: .validate`` resolves the resource and attribute names), so what those two
#: arguments name is checked, in outputs too.
_RESOLVED_BY_VALIDATE = frozenset({"get_attr", "Fn::GetAtt"})


@dataclass(frozen=True, slots=True)
class ResourceDefinition:
    name: str
    #: The type as the template wrote it.
    type: str
    #: The type after the environment's resource_registry (alias or template path).
    resolved_type: str
    properties: Any
    metadata: Any
    depends_on: tuple[str, ...]
    #: Every resource this one needs first: explicit and implicit, sorted.
    requires: tuple[str, ...]
    deletion_policy: str
    update_policy: Any
    description: str | None
    external_id: Any
    path: Path


@dataclass(frozen=True, slots=True)
class OutputDefinition:
    name: str
    #: ``None`` when the output's condition is false.
    value: Any
    description: Any
    path: Path


@dataclass(frozen=True, slots=True)
class StackDefinition:
    template: Template
    environment: Environment
    parameters: ParameterValues
    conditions: Mapping[str, bool]
    resources: dict[str, ResourceDefinition]
    outputs: dict[str, OutputDefinition]
    #: Resources present in the template but switched off by a condition.
    disabled: frozenset[str] = field(default_factory=frozenset)


class _Lookups:
    """A catalog asked once per type name: a template names few types, many
    times over (every resource, every ``get_attr``)."""

    __slots__ = ("catalog", "found")

    def __init__(self, catalog: TypeCatalog) -> None:
        self.catalog = catalog
        self.found: dict[str, TypeInfo | None] = {}

    def lookup(self, type_name: str) -> TypeInfo | None:
        if type_name not in self.found:
            self.found[type_name] = self.catalog.lookup(type_name)
        return self.found[type_name]


class _Scope:
    """The static view functions validate against."""

    def __init__(
        self,
        template: Template,
        enabled: Collection[str],
        catalog: TypeCatalog | None,
        types: Mapping[str, str],
    ) -> None:
        self.template = template
        self.enabled = enabled
        self.catalog = catalog
        self.types = types

    @property
    def version(self) -> TemplateVersion:
        return self.template.version

    def has_parameter(self, name: str) -> bool:
        return name in self.template.parameters or self.version.is_pseudo_parameter(name)

    def has_resource(self, name: str) -> bool:
        return name in self.enabled

    def has_condition(self, name: str) -> bool:
        return name in self.template.conditions

    def attribute_names(self, resource: str) -> Collection[str] | None:
        if self.catalog is None or resource not in self.types:
            return None
        info = self.catalog.lookup(self.types[resource])
        return None if info is None else info.attribute_names

    def file(self, name: str) -> str | None:
        return self.template.files.get(name)


class _Builder:
    def __init__(
        self,
        template: Template,
        env: Environment,
        params: ParameterValues,
        catalog: TypeCatalog | None,
        read: Callable[[str], Any] | None = None,
    ) -> None:
        self.t = template
        self.env = env
        self.params = params
        self.catalog = catalog
        self.diags = Diagnostics()
        self.conditions = Conditions(template.conditions, read or params.value)
        #: Expansion problems already reported: many ``if`` share one condition.
        self.unexpanded: set[tuple[str, Path]] = set()
        self._reported: frozenset[tuple[str, Path]] | None = None

    def reported(self) -> frozenset[tuple[str, Path]]:
        """What was reported before the types were checked (message, path),
        worked out once: the value checks must not say it again."""
        if self._reported is None:
            self._reported = frozenset((d.message, d.path) for d in self.diags)
        return self._reported

    def error(self, message: str, path: Path) -> None:
        self.diags.add(self.t.source.diagnostic(message, path))

    def enabled(self, condition: Any, path: Path) -> bool:
        try:
            return self.conditions.is_enabled(condition)
        except ExpressionError as exc:
            self.error(exc.message, path)
        except ConvectionError as exc:
            self.error(str(exc), path)
        return False

    def expand(self, snippet: Any, path: Path, absent: Any = None) -> Any:
        """Expand the macros in ``snippet`` (found at ``path``).

        A whole section that a two-argument ``if`` drops (2021-04-16:
        ``properties: {if: [cond, {...}]}`` with ``cond`` false) is treated
        as if it were not written, as Heat's IfNullable documents: it is
        ``absent``, the section's value when left out.

        A condition an ``if`` needs may fail to evaluate (a parameter with no
        value, a broken definition). That is reported once, where the
        condition went wrong, and the snippet stays unexpanded so the rest of
        the template is still checked.
        """
        try:
            expanded = functions.expand(snippet, self.conditions)
            return absent if expanded is functions.DROP else expanded
        except ExpressionError as exc:
            problem = (exc.message, exc.path or path)
        except ConvectionError as exc:
            problem = (str(exc), path)
        if problem not in self.unexpanded:
            self.unexpanded.add(problem)
            self.error(*problem)
        return snippet

    def deletion_policy(self, snippet: ResourceSnippet) -> str:
        raw = snippet.deletion_policy
        if raw is None:
            return "Delete"
        path = (*snippet.path, "deletion_policy")
        try:
            value = functions.expand(raw, self.conditions)
            if value is functions.DROP:
                return "Delete"
            value = functions.resolve(value, self.conditions)
        except ConvectionError as exc:
            self.error(str(exc), path)
            return "Delete"
        allowed = self.t.version.deletion_policies
        if not isinstance(value, str) or value not in allowed:
            self.error(f'Invalid deletion policy "{value}"', path)
            return "Delete"
        return _POLICY_NAMES.get(value, value)

    def resource(self, s: ResourceSnippet, enabled: Collection[str]) -> ResourceDefinition:
        properties = self.expand(s.properties, (*s.path, "properties"), {})
        metadata = self.expand(s.metadata, (*s.path, "metadata"))
        for dep in s.depends_on:
            # Heat drops a dependency on a resource its condition switched
            # off (``ResourceDefinition.dependencies``: "conditionally
            # defined, allow dependencies on it"); a name that is no resource
            # of the template is an error.
            if dep not in enabled and dep not in self.t.resources:
                self.error(
                    f'The specified reference "{dep}" (in {s.name}) is incorrect.',
                    (*s.path, "depends_on"),
                )
        implicit = set(functions.dependencies(properties))
        implicit.update(functions.dependencies(metadata))
        requires = {d for d in (*s.depends_on, *implicit) if d in enabled}
        return ResourceDefinition(
            name=s.name,
            type=s.type,
            resolved_type=self.resolve_type(s),
            properties=properties,
            metadata=metadata,
            depends_on=s.depends_on,
            requires=tuple(sorted(requires)),
            deletion_policy=self.deletion_policy(s),
            update_policy=self.expand(s.update_policy, (*s.path, "update_policy")),
            description=s.description,
            external_id=self.expand(s.external_id, (*s.path, "external_id")),
            path=s.path,
        )

    def resolve_type(self, s: ResourceSnippet) -> str:
        try:
            return self.env.resource_registry.resolve(s.type, s.name).type_name
        except ConvectionError as exc:
            self.error(str(exc), (*s.path, "type"))
            return s.type

    def output(self, o: OutputSnippet) -> OutputDefinition:
        on = self.enabled(o.condition, (*o.path, "condition"))
        value = self.expand(o.value, (*o.path, "value")) if on else None
        return OutputDefinition(o.name, value, o.description, o.path)


def build_definition(
    template: Template,
    environment: Environment,
    parameters: ParameterValues,
    *,
    catalog: TypeCatalog | None = None,
    read: Callable[[str], Any] | None = None,
    values: PropertyValues | None = None,
) -> tuple[StackDefinition, Diagnostics]:
    """Evaluate conditions, expand macros and check every reference.

    Returns the definition even when diagnostics hold errors, so that
    callers can report every problem; they must not act on it then.
    Parameter *values* reach a definition only through its conditions,
    which read them with ``read`` (default ``parameters.value``): the
    compiler passes a recorder to learn which values a definition depends
    on, so group members can share it (``convection.model._member_compile``).
    With ``values`` (a create, update or preview) the types check each
    property's value where it needs no resource, as Heat's
    ``Properties.validate(with_value=True)`` does; the definition still
    holds the calls (see :mod:`convection.model._values`). Those reads of
    parameters are ``values.read``'s, not ``read``'s: they add diagnostics,
    never change the definition.
    """
    b = _Builder(template, environment, parameters, catalog, read)
    conditions = _evaluate_conditions(b)
    enabled = [
        n for n, s in template.resources.items() if b.enabled(s.condition, (*s.path, "condition"))
    ]
    enabled_set = frozenset(enabled)
    resources = {n: b.resource(template.resources[n], enabled_set) for n in enabled}
    outputs = {n: b.output(o) for n, o in template.outputs.items()}
    types = {n: r.resolved_type for n, r in resources.items()}
    lookups = None if catalog is None else _Lookups(catalog)
    scope = _Scope(template, enabled_set, lookups, types)
    unchecked = _unchecked_in_outputs(outputs.values())
    resources = _computed_edges(b, scope, resources, outputs.values(), unchecked)
    _validate_functions(b, scope, resources.values(), outputs.values(), unchecked)
    _validate_types(b, lookups, resources.values(), values)
    definition = StackDefinition(
        template=template,
        environment=environment,
        parameters=parameters,
        conditions=conditions,
        resources=resources,
        outputs=outputs,
        disabled=frozenset(template.resources) - enabled_set,
    )
    return definition, b.diags


def _evaluate_conditions(b: _Builder) -> dict[str, bool]:
    """Every definition is checked for its shape, as Heat's
    ``Conditions.validate`` does; values are reported where they are used,
    because Heat evaluates a condition only when something needs it."""
    values = {}
    for name, tree in b.t.conditions.items():
        if not isinstance(tree, bool | Function):
            b.error(
                f'The definition of condition "{name}" is invalid: {tree}', ("conditions", name)
            )
            continue
        try:
            values[name] = b.conditions.is_enabled(name)
        except ConvectionError:
            continue
    return values


def _unchecked_in_outputs(outputs: Iterable[OutputDefinition]) -> frozenset[Path]:
    """Where the outputs call a function Heat does not look up at validate
    (``_UNCHECKED_IN_OUTPUTS``), except inside the names ``get_attr``
    resolves: what such a call names is left to the output's value."""
    found: set[Path] = set()
    pending: list[tuple[Any, bool]] = [(o.value, False) for o in outputs]
    while pending:
        node, resolved = pending.pop()
        if isinstance(node, Function):
            if node.name in _UNCHECKED_IN_OUTPUTS and not resolved:
                found.add(node.path)
            if node.name in _RESOLVED_BY_VALIDATE and isinstance(node.args, list):
                pending.extend((a, True) for a in node.args[:2])
                pending.extend((a, resolved) for a in node.args[2:])
            else:
                pending.append((node.args, resolved))
        elif isinstance(node, dict):
            pending.extend((v, resolved) for v in node.values())
        elif isinstance(node, list):
            pending.extend((v, resolved) for v in node)
    return frozenset(found)


def _add_located(b: _Builder, found: Diagnostics, skip: frozenset[Path] = frozenset()) -> None:
    """Add ``found`` to the builder's diagnostics, marked where they point,
    leaving out those at a path in ``skip``."""
    for d in found:
        if d.path not in skip:
            b.diags.add(d if d.mark is not None else replace(d, mark=b.t.source.mark(d.path)))


def _computed_edges(
    b: _Builder,
    scope: _Scope,
    resources: dict[str, ResourceDefinition],
    outputs: Iterable[OutputDefinition],
    unchecked: frozenset[Path],
) -> dict[str, ResourceDefinition]:
    """Add the edges of references whose resource name is computed
    (``get_resource: {get_param: which}``), which Heat resolves, with the
    parameters' values, when it builds the graph; and check those names.
    One pass over each snippet, so the graph stays O(V+E)."""
    sub = Diagnostics()
    read, files = b.conditions.parameter, b.t.files
    out = resources
    for name, r in resources.items():
        found = set(computed_references(r.properties, read, files, scope, sub))
        found.update(computed_references(r.metadata, read, files, scope, sub))
        if not found.issubset(r.requires):
            if out is resources:
                out = dict(resources)
            out[name] = replace(r, requires=tuple(sorted(found.union(r.requires))))
    _add_located(b, sub)
    in_outputs = Diagnostics()
    for o in outputs:
        for _ in computed_references(o.value, read, files, scope, in_outputs):
            pass
    _add_located(b, in_outputs, unchecked)
    return out


def _validate_functions(
    b: _Builder,
    scope: _Scope,
    resources: Iterable[ResourceDefinition],
    outputs: Iterable[OutputDefinition],
    unchecked: frozenset[Path],
) -> None:
    sub = Diagnostics()
    for tree in b.t.conditions.values():
        functions.validate(tree, scope, sub)
    for r in resources:
        functions.validate(r.properties, scope, sub)
        functions.validate(r.metadata, scope, sub)
    _add_located(b, sub)
    in_outputs = Diagnostics()
    for o in outputs:
        functions.validate(o.value, scope, in_outputs)
    _add_located(b, in_outputs, unchecked)


def _validate_types(
    b: _Builder,
    lookups: _Lookups | None,
    resources: Iterable[ResourceDefinition],
    values: PropertyValues | None = None,
) -> None:
    if lookups is None:
        return
    sub = Diagnostics()
    for r in resources:
        info = lookups.lookup(r.resolved_type)
        if info is None:
            hint = _did_you_mean(r.type, lookups.catalog)
            b.error(f"The Resource Type ({r.type}) could not be found.{hint}", (*r.path, "type"))
            continue
        if values is None or getattr(info, "ignores_properties", False) is True:
            info.validate_properties(r.properties, (*r.path, "properties"), sub)
        else:
            _validate_values(b, info, r, values, sub)
        # Not isinstance(info, Provider): a runtime Protocol check costs
        # more than the rest of this loop, and this runs per resource.
        check = getattr(info, "validate_facade", None) if r.type != r.resolved_type else None
        if check is not None:
            facade = _facade(b.env, lookups, r)
            if facade is not None:
                check(facade, r.type, (*r.path, "type"), sub)
    _add_located(b, sub)


def _validate_values(
    b: _Builder, info: TypeInfo, r: ResourceDefinition, values: PropertyValues, diags: Diagnostics
) -> None:
    """Check ``r``'s properties with their values (Heat's ``with_value``):
    its static calls' errors, then the schema on what they resolved to.
    A type that reads no properties (``ignores_properties``: OS::Heat::None,
    whose Heat ``reparse`` drops them) is not asked.
    A call's error already reported (a computed resource name's, by
    ``_computed_edges``) is not repeated. When a hidden parameter was read,
    its value is masked in every message about the resource."""
    errors: list[Diagnostic] = []
    checked, secret = values.evaluate(r.name, r.properties, errors)
    if not errors and not secret:  # most resources
        info.validate_properties(checked, (*r.path, "properties"), diags)
        return
    found = Diagnostics()
    if errors:
        seen = b.reported()
        found.extend(d for d in errors if (d.message, d.path) not in seen)
    info.validate_properties(checked, (*r.path, "properties"), found)
    if secret:
        secrets = b.params.hidden_texts()
        diags.extend(masked(d, secrets) for d in found)
    else:
        diags.extend(found)


def check_values(
    definition: StackDefinition,
    catalog: TypeCatalog | None,
    values: PropertyValues,
    names: Iterable[str],
) -> Diagnostics:
    """The value checks of ``names`` again, for a definition built with
    other parameter values (a group member sharing another's: what its
    resources' values read differs, so their checks may too)."""
    b = _Builder(definition.template, definition.environment, definition.parameters, catalog)
    if catalog is not None:
        chosen = [definition.resources[n] for n in names if n in definition.resources]
        _validate_types(b, _Lookups(catalog), chosen, values)
    return b.diags


def _facade(env: Environment, lookups: _Lookups, r: ResourceDefinition) -> TypeInfo | None:
    """The type a template resource stands in for: Heat's next match for
    the type as written once the template used is set aside
    (``get_resource_info(..., ignore=self.resource_info)`` in
    ``TemplateResource.validate``). That is the registry's entry for every
    resource when the template came from this resource's own entry, else
    the plugin of that name. None when the type is written as the template's
    own name or nothing else answers to it: Heat then checks nothing."""
    if r.type == r.resolved_type or is_template_name(r.type):
        return None
    try:
        found = env.resource_registry.resolve(
            r.type, is_known=lambda name: lookups.lookup(name) is not None
        )
    except ConvectionError:
        return None  # a loop, reported where the type was resolved
    if found.type_name != r.resolved_type:
        return lookups.lookup(found.type_name)
    return lookups.lookup(r.type)


def _did_you_mean(name: str, catalog: TypeCatalog) -> str:
    names = getattr(catalog, "names", None)
    if names is None:
        return ""
    close = difflib.get_close_matches(name, list(names()), n=1, cutoff=0.8)
    return f" Did you mean {close[0]}?" if close else ""
