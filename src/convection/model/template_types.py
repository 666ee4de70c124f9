"""Template resources as resource types, for validation.

A resource whose type is a template (``type: tier.yaml``, or a registry
alias to one) behaves as Heat's TemplateResource: the nested template's
parameters are its properties and its outputs are its attributes. This
module gives the definition builder a :class:`TypeInfo` for such a type,
built from the nested template held in the ``files`` map, so a parent's
references are checked against the real nested interface.

A template that stands in for a class type (``OS::Nova::Server:
server.yaml``) is also checked against that type, its facade, as Heat's
``TemplateResource._validate_against_facade`` does: what the facade
requires the provider must take, with the same type; what the provider
requires the facade must know; every facade attribute must be an output.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from convection.common import (
    DEFAULT_LIMITS,
    Diagnostic,
    Diagnostics,
    InvalidInput,
    Limits,
    Path,
    Severity,
    suggest,
)
from convection.hot import Template, load, parse_template
from convection.model.definition import TypeCatalog, TypeInfo

#: Heat's property type for each parameter type (``Schema.from_parameter``):
#: a template resource's properties are its template's parameters.
PARAMETER_PROPERTY_TYPES: Mapping[str, str] = {
    "string": "String",
    "number": "Number",
    "comma_delimited_list": "List",
    "json": "Map",
    "boolean": "Boolean",
}
#: The attribute every Heat resource has (``base_attributes_schema``).
SHOW_ATTRIBUTE = "show"


@dataclass(frozen=True, slots=True)
class FacadeProperty:
    """One property as a facade check compares it: Heat's type name
    (``String``, ``Integer``, ``Map``...) and whether it is required."""

    type: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class TypeInterface:
    """A resource type's properties and attributes, as Heat compares a
    facade with the template that provides it. ``None`` for a part that is
    not known (a type catalogued by name only): that part is not checked,
    rather than guessed."""

    properties: Mapping[str, FacadeProperty] | None
    #: Every attribute name, ``show`` included.
    attributes: frozenset[str] | None


@runtime_checkable
class HasInterface(Protocol):
    """A :class:`TypeInfo` that can say what its interface is."""

    def interface(self) -> TypeInterface | None: ...


def _param_type(heat_type: str) -> str:
    """Heat's ``allowed_param_prop_type``: an Integer property is supplied
    by a number parameter, every other type by its own."""
    return "Number" if heat_type == "Integer" else heat_type


def facade_problems(facade: TypeInterface, provider: TypeInterface, name: str) -> Iterator[str]:
    """Heat's words for each way ``provider`` does not fit ``facade``
    (type ``name``), in the order Heat checks them: facade properties,
    provider properties, then attributes. Heat stops at the first; all are
    given here, as every other problem of a template is."""
    given = provider.properties
    wanted = facade.properties
    if given is not None and wanted is not None:
        for prop, fs in wanted.items():
            ps = given.get(prop)
            if ps is None and fs.required:
                yield f"Required property {prop} for facade {name} missing in provider"
            # An Any property has no parameter type (Heat's lookup fails on it).
            elif ps is not None and fs.type != "Any" and _param_type(fs.type) != ps.type:
                yield (
                    f"Property {prop} type mismatch between facade {name} "
                    f"({fs.type}) and provider ({ps.type})"
                )
        for prop, ps in given.items():
            if ps.required and prop not in wanted:
                yield f"Provider requires property {prop} unknown in facade {name}"
    if facade.attributes is not None and provider.attributes is not None:
        for attr in sorted(facade.attributes - provider.attributes):
            yield f"Attribute {attr} for facade {name} missing in provider"


@dataclass(frozen=True, slots=True)
class TemplateTypeInfo:
    name: str
    template: Template | None
    problems: tuple[Diagnostic, ...]
    strict: bool
    #: The environment's parameter_defaults: a nested parameter they supply
    #: is not a required property (Heat's ``param_schemata(param_defaults)``).
    supplied: frozenset[str] = frozenset()

    @property
    def attribute_names(self) -> Collection[str] | None:
        """Any name: Heat checks ``get_attr`` names only for resources that
        answer from their schema, and a TemplateResource answers itself
        (its outputs, and ``resource.NAME...`` of its nested stack), so an
        unknown name is an ``output_error`` when read, not a template error
        (heat/engine/hot/functions.py ``GetAtt.validate``)."""
        return None

    def interface(self) -> TypeInterface | None:
        """Heat's ``TemplateResource.get_schemas``: a property per parameter
        (required when it has no default, ``parameter_defaults`` counting as
        one) and an attribute per output, plus ``show``."""
        if self.template is None:
            return None
        props = {
            name: FacadeProperty(
                PARAMETER_PROPERTY_TYPES.get(schema.type, "Map"),
                schema.required and name not in self.supplied,
            )
            for name, schema in self.template.parameters.items()
        }
        return TypeInterface(props, frozenset(self.template.outputs) | {SHOW_ATTRIBUTE})

    def validate_facade(self, facade: TypeInfo, name: str, path: Path, diags: Diagnostics) -> None:
        """Check this template against the class type ``name`` it stands in
        for. Heat does so in ``TemplateResource.validate``, which stack
        create, update and preview run and template-validate does not
        (``validate_res_tmpl_only``): so only a strict check fails; a
        validate is warned."""
        own = self.interface()
        other = facade.interface() if isinstance(facade, HasInterface) else None
        if own is None or other is None:
            return
        severity = Severity.ERROR if self.strict else Severity.WARNING
        for message in facade_problems(other, own, name):
            diags.add(Diagnostic(message, path, severity=severity))

    def validate_properties(self, properties: object, path: Path, diags: Diagnostics) -> None:
        where = "/".join(str(p) for p in path[:2])
        for problem in self.problems:  # the nested template's own, in its own file
            message = f"in template {self.name} (used by {where}): {problem.message}"
            diags.add(Diagnostic(message, problem.path, problem.mark, problem.severity))
        if self.template is None or not isinstance(properties, dict):
            return
        params = self.template.parameters
        for key in properties:
            if key not in params:
                hint = suggest(key, params)
                diags.add(Diagnostic(f"Unknown Property {key}{hint}", (*path, key)))
        severity = Severity.ERROR if self.strict else Severity.WARNING
        for name, schema in params.items():
            if schema.required and properties.get(name) is None and name not in self.supplied:
                diags.add(
                    Diagnostic(f"Property {name} not assigned", (*path, name), severity=severity)
                )


@dataclass
class TemplateAwareCatalog:
    """Template types from ``files`` first, then the plugin catalog."""

    base: TypeCatalog | None
    files: Mapping[str, str]
    strict: bool = True
    limits: Limits = DEFAULT_LIMITS
    parameter_defaults: Collection[str] = ()
    _cache: dict[str, TemplateTypeInfo] = field(default_factory=dict)

    def lookup(self, type_name: str) -> TypeInfo | None:
        if type_name in self.files:
            if type_name not in self._cache:
                self._cache[type_name] = self._load(type_name)
            return self._cache[type_name]
        return None if self.base is None else self.base.lookup(type_name)

    def names(self) -> list[str]:
        base = getattr(self.base, "names", None)
        return list(base()) if base is not None else []

    def _load(self, name: str) -> TemplateTypeInfo:
        supplied = frozenset(self.parameter_defaults)
        try:
            doc = load(self.files[name], name, limits=self.limits)
        except InvalidInput as exc:
            return TemplateTypeInfo(name, None, tuple(exc.diagnostics), self.strict, supplied)
        template, diags = parse_template(doc, files=self.files)
        problems = tuple(d for d in diags if d.is_error)
        return TemplateTypeInfo(name, template, problems, self.strict, supplied)
