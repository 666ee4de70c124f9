"""Template resources as resource types, for validation.

A resource whose type is a template (``type: tier.yaml``, or a registry
alias to one) behaves as Heat's TemplateResource: the nested template's
parameters are its properties and its outputs are its attributes. This
module gives the definition builder a :class:`TypeInfo` for such a type,
built from the nested template held in the ``files`` map, so a parent's
references are checked against the real nested interface.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

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
