"""Stack inputs → a checked :class:`StackDefinition` and its :class:`Graph`.

The one pure pipeline behind ``template validate``, ``template graph``,
preview, create and update. Each phase takes what the previous one gave, so
the order is fixed by signatures, not flags:

    Document ─► Template ─► (+ Environment, ParameterValues)
         ─► StackDefinition ─► Graph

Every phase's diagnostics are gathered, so a user sees all problems at once.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from convection.common import (
    DEFAULT_LIMITS,
    Diagnostic,
    Diagnostics,
    InvalidInput,
    LimitExceeded,
    Limits,
    collector_paused,
)
from convection.hot import (
    Document,
    Environment,
    ParameterValues,
    Template,
    load,
    merge_environments,
    parse_environment,
    parse_template,
    resolve_parameters,
)
from convection.model import _recompile
from convection.model._member_compile import Entry, MemberCompiles, Recorder, Variant
from convection.model._values import PropertyValues
from convection.model.definition import (
    StackDefinition,
    TypeCatalog,
    build_definition,
    check_values,
)
from convection.model.graph import CycleError, Graph
from convection.model.template_types import TemplateAwareCatalog


@dataclass(frozen=True, slots=True)
class StackInputs:
    """Everything a stack operation is given, as Heat's API carries it, with
    the template and environment files already loaded (so they keep their
    own file names and line numbers)."""

    template: Document
    #: Environment files in the order given; later ones win.
    environments: tuple[Document, ...] = ()
    #: get_file contents and template-resource templates, by ``files`` key.
    files: Mapping[str, str] = field(default_factory=dict)
    #: ``--parameter`` values: strings from a CLI, any JSON from the API.
    #: Environment files override these, as Heat's server-side merge does.
    parameters: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_text(
        cls,
        template: str,
        *,
        name: str = "<template>",
        environments: Sequence[tuple[str, str]] = (),
        files: Mapping[str, str] | None = None,
        parameters: Mapping[str, Any] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> StackInputs:
        """Load texts (raising InvalidInput with every load error)."""
        diags = Diagnostics()
        docs = []
        for env_name, text in ((name, template), *environments):
            try:
                docs.append(load(text, env_name, limits=limits))
            except InvalidInput as exc:
                diags.extend(exc.diagnostics)
        if diags.has_errors:
            raise InvalidInput(diags)
        return cls(docs[0], tuple(docs[1:]), dict(files or {}), dict(parameters or {}))


@dataclass(frozen=True, slots=True)
class StackIdentity:
    name: str = "dummy"
    id: str = "None"
    project_id: str = "default"


#: What Heat's template-validate uses for the pseudo-parameters.
VALIDATION_IDENTITY = StackIdentity()


@dataclass(frozen=True, slots=True)
class Compiled:
    template: Template
    environment: Environment
    definition: StackDefinition
    graph: Graph
    warnings: tuple[Diagnostic, ...]


def load_environment(
    inputs: StackInputs, param_types: Mapping[str, str]
) -> tuple[Environment, Diagnostics]:
    """Parse and merge the environment files as Heat's server does."""
    diags = Diagnostics()
    parsed = []
    for doc in inputs.environments:
        diags.extend(doc.warnings)
        parsed.append(parse_environment(doc, diags))
    env = merge_environments(
        parsed, param_types=param_types, user_parameters=inputs.parameters, diags=diags
    )
    return env, diags


def compile_stack(
    inputs: StackInputs,
    *,
    identity: StackIdentity = VALIDATION_IDENTITY,
    catalog: TypeCatalog | None = None,
    strict: bool = True,
    limits: Limits = DEFAULT_LIMITS,
    shared: MemberCompiles | None = None,
    owner: str = "",
    values: bool | None = None,
) -> Compiled:
    """Run every phase; raise :class:`InvalidInput` listing all errors.

    ``strict=False`` is template-validate mode, as Heat's: parameter values
    need not be supplied and are not checked against constraints.
    ``values`` (default: ``strict``) checks each property's value where it
    needs no resource, as Heat's create, update and preview do
    (:mod:`convection.model._values`); a stored template, accepted when it
    was given, is compiled again without (``values=False``), so a stack made
    before a check existed can still be read, updated from and deleted.
    ``shared`` (tagged with ``owner``) holds parses and definitions that
    other compiles of the same template may reuse: a group's members.
    """
    checks = strict if values is None else values
    with collector_paused():  # see convection.common.gc: compiling makes no cycles
        key = _stack_key(identity, catalog, (strict, checks), limits)
        previous = None if key is None else _recompile.recall(key)
        if previous is not None:
            found = _again(
                inputs, previous, catalog=catalog, strict=strict, limits=limits, values=checks
            )
            if found is not None:
                _remember(key, inputs, found)
                return found
        compiled = _compile_stack(
            inputs,
            identity=identity,
            catalog=catalog,
            strict=strict,
            limits=limits,
            shared=_Sharing(shared, owner) if shared is not None else None,
            values=checks,
        )
        if key is not None:
            _remember(key, inputs, compiled)
        return compiled


def _stack_key(
    identity: StackIdentity,
    catalog: TypeCatalog | None,
    mode: tuple[bool, bool],
    limits: Limits,
) -> Hashable | None:
    """What a compile of a stack's template is remembered under (see
    :mod:`convection.model._recompile`); None for validation and previews of new
    stacks, which are never remembered."""
    if identity.id in (VALIDATION_IDENTITY.id, ""):
        return None
    key = (identity, catalog, mode, limits)
    try:
        hash(key)
    except TypeError:  # an unhashable catalog: nothing to key on
        return None
    return key


def _sources(inputs: StackInputs) -> _recompile.Sources:
    return _recompile.Sources(
        inputs.template, tuple(inputs.environments), inputs.files, inputs.parameters
    )


def _remember(key: Hashable, inputs: StackInputs, compiled: Compiled) -> None:
    previous = _recompile.Previous(
        _sources(inputs), compiled.template, compiled.environment, compiled.definition, compiled
    )
    _recompile.remember(key, previous)


def _again(
    inputs: StackInputs,
    previous: _recompile.Previous,
    *,
    catalog: TypeCatalog | None,
    strict: bool,
    limits: Limits,
    values: bool,
) -> Compiled | None:
    """The compile of ``inputs`` built from the stack's previous compile, or
    None when only a full compile gives the exact result."""
    sources = _sources(inputs)
    changed = _recompile.changed_resources(sources, previous.sources)
    if changed is None:
        return None
    last: Compiled = previous.result
    if last.warnings:
        return None  # warnings come in template order: let a full compile place them
    if not changed:
        return last
    rebuilt = _recompile.recompile(
        sources, previous, changed, catalog=catalog, strict=strict, limits=limits, values=values
    )
    if rebuilt is None:
        return None
    template, definition = rebuilt
    graph = last.graph
    if any(
        definition.resources[n].requires != last.definition.resources[n].requires
        for n in changed
        if n in definition.resources
    ):
        diags = Diagnostics()
        graph = _graph(definition, diags)
        if diags.has_errors:
            return None
    return Compiled(template, last.environment, definition, graph, ())


def _compile_stack(
    inputs: StackInputs,
    *,
    identity: StackIdentity = VALIDATION_IDENTITY,
    catalog: TypeCatalog | None = None,
    strict: bool = True,
    limits: Limits = DEFAULT_LIMITS,
    shared: _Sharing | None = None,
    values: bool = True,
) -> Compiled:
    """Run every phase; raise :class:`InvalidInput` listing all errors.

    ``strict=False`` is template-validate mode, as Heat's: parameter values
    need not be supplied and are not checked against constraints.
    """
    entry = None
    template: Template | None
    if shared is not None:
        entry = shared.cache.find(
            inputs.template, inputs.environments, inputs.files, catalog, (strict, values), limits
        )
    if entry is not None:
        template, diags = entry.template, Diagnostics()
        diags.extend(entry.diagnostics)
    else:
        template, diags = parse_template(inputs.template, files=inputs.files)
    parsed = tuple(diags)
    types = {} if template is None else {n: p.type for n, p in template.parameters.items()}
    environment, ediags = load_environment(inputs, types)
    diags.extend(ediags)
    if template is None:
        raise InvalidInput(diags)
    _check_resource_count(template, limits)
    params = resolve_parameters(
        template.parameters,
        environment.parameters,
        environment.parameter_defaults,
        stack_name=identity.name,
        stack_id=identity.id,
        project_id=identity.project_id,
        source=template.source,
        diags=diags,
        strict=strict,
        cfn=template.version.is_cfn,
    )
    nested = (
        None
        if catalog is None
        else TemplateAwareCatalog(
            catalog,
            inputs.files,
            strict=strict,
            limits=limits,
            parameter_defaults=tuple(environment.parameter_defaults),
        )
    )
    checker = PropertyValues(params, template.files, limits) if values else None
    variant = None if entry is None or diags.has_errors else entry.variant(params)
    if variant is not None:
        definition = replace(variant.definition, environment=environment, parameters=params)
        graph = variant.graph
        diags.extend(variant.diagnostics)
        if checker is not None and variant.valued:
            again = check_values(definition, nested, checker, variant.valued)
            diags.extend(again.errors)
    else:
        recorder = Recorder(params)
        before = len(tuple(diags))
        definition, ddiags = build_definition(
            template, environment, params, catalog=nested, read=recorder, values=checker
        )
        diags.extend(ddiags)
        graph = _graph(definition, diags)
        if shared is not None and not diags.has_errors:
            used = recorder.used()
            valued = frozenset(() if checker is None else checker.read)
            made = (
                None
                if used is None
                else Variant(used, definition, graph, tuple(diags)[before:], valued)
            )
            mode = (catalog, (strict, values), limits)
            shared.keep(entry, inputs, (template, parsed), mode, made)
    if diags.has_errors:
        raise InvalidInput(diags)
    return Compiled(template, environment, definition, graph, tuple(diags.warnings))


@dataclass(frozen=True, slots=True)
class _Sharing:
    """A compile's view of a :class:`MemberCompiles` and whose it is."""

    cache: MemberCompiles
    owner: str

    def keep(
        self,
        entry: Entry | None,
        inputs: StackInputs,
        parse: tuple[Template, tuple[Diagnostic, ...]],
        mode: tuple[TypeCatalog | None, tuple[bool, bool], Limits],
        made: Variant | None,
    ) -> None:
        """Remember the parse (with its own diagnostics: the environment's
        and the parameters' are made afresh by every compile) and the
        definition, unless one of its parameter reads failed (``None``)."""
        if entry is None:
            catalog, switches, limits = mode
            entry = Entry(
                self.owner,
                inputs.template,
                tuple(inputs.environments),
                dict(inputs.files),
                catalog,
                switches,
                limits,
                parse[0],
                parse[1],
            )
            self.cache.add(entry)
        if made is not None:
            entry.add(made)


def _check_resource_count(template: Template, limits: Limits) -> None:
    cap = limits.max_resources_per_stack
    if cap >= 0 and len(template.resources) > cap:
        raise LimitExceeded(
            [
                template.source.diagnostic(
                    f"The template has {len(template.resources)} resources; the "
                    f"maximum per stack is {cap} (max_resources_per_stack).",
                    ("resources",),
                )
            ]
        )


def _graph(definition: StackDefinition, diags: Diagnostics) -> Graph:
    resources = definition.resources
    edges = [(name, dep) for name, r in resources.items() for dep in r.requires]
    try:
        graph = Graph.build(resources, edges)
        graph.topological_order()
    except CycleError as exc:
        first = exc.cycle[0]
        diags.add(definition.template.source.diagnostic(str(exc), ("resources", first)))
        return Graph.build(resources, [])
    return graph


def parameter_values(compiled: Compiled) -> ParameterValues:
    return compiled.definition.parameters
