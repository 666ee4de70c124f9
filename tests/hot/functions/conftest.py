"""Real, dict-backed implementations of the Scope and Resolver protocols, and
a harness that parses, validates, expands and resolves a snippet the way the
template and definition layers do."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from convection.common.diagnostics import Diagnostics
from convection.common.errors import ExpressionError
from convection.common.limits import DEFAULT_LIMITS, Limits
from convection.common.types import Path
from convection.hot.functions.base import expand, parse, resolve, validate
from convection.hot.versions import TemplateVersion, get_version

LATEST = "2021-04-16"
#: Where the located helpers parse a snippet: a resource property.
AT: Path = ("resources", "r", "properties", "value")


@dataclass
class DictScope:
    """What a template declares: parameter, resource, condition and file names."""

    version: TemplateVersion
    parameters: Collection[str] = ()
    #: resource name -> declared attribute names, or None when any is allowed
    resources: Mapping[str, Collection[str] | None] = field(default_factory=dict)
    conditions: Collection[str] = ()
    files: Mapping[str, str] = field(default_factory=dict)

    def has_parameter(self, name: str) -> bool:
        return name in self.parameters

    def has_resource(self, name: str) -> bool:
        return name in self.resources

    def has_condition(self, name: str) -> bool:
        return name in self.conditions

    def attribute_names(self, resource: str) -> Collection[str] | None:
        return self.resources.get(resource)

    def file(self, name: str) -> str | None:
        return self.files.get(name)


@dataclass
class DictResolver:
    """What a running stack knows. Unknown names raise KeyError, as the
    protocol documents; conditions are plain booleans by name."""

    parameters: Mapping[str, Any] = field(default_factory=dict)
    #: resource name -> reference id
    ids: Mapping[str, Any] = field(default_factory=dict)
    #: resource name -> attribute name -> value
    attributes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    facades: Mapping[str, Any] = field(default_factory=dict)
    conditions: Mapping[str, bool] = field(default_factory=dict)
    limits: Limits = DEFAULT_LIMITS

    def parameter(self, name: str) -> Any:
        return self.parameters[name]

    def resource_id(self, name: str) -> Any:
        return self.ids[name]

    def attribute(self, resource: str, name: str | None) -> Any:
        attrs = self.attributes[resource]
        return dict(attrs) if name is None else attrs[name]

    def file(self, name: str) -> str | None:
        return self.files.get(name)

    def facade(self, section: str) -> Any:
        return self.facades[section]

    def condition(self, name: str) -> bool:
        if name not in self.conditions:
            raise ExpressionError(f'Invalid condition "{name}"')
        return self.conditions[name]


class Hot:
    """Runs snippets through the same steps as the template pipeline."""

    def version(self, name: str) -> TemplateVersion:
        found = get_version(name)
        assert found is not None, name
        return found

    def parse(
        self, snippet: Any, version: str = LATEST, *, in_conditions: bool = False, path: Path = ()
    ) -> tuple[Any, list[str]]:
        v = self.version(version)
        diags = Diagnostics()
        table = v.condition_table if in_conditions else v.functions
        tree = parse(snippet, table, diags, path)
        return tree, [d.message for d in diags]

    def tree(self, snippet: Any, version: str = LATEST, **kw: Any) -> Any:
        tree, errors = self.parse(snippet, version, **kw)
        assert errors == [], errors
        return tree

    def parse_error(self, snippet: Any, version: str = LATEST, **kw: Any) -> str:
        _, errors = self.parse(snippet, version, **kw)
        assert len(errors) == 1, errors
        return errors[0]

    def parse_error_at(
        self, snippet: Any, version: str = LATEST, *, path: Path = AT, **kw: Any
    ) -> tuple[str, Path]:
        """The one parse error of ``snippet`` parsed at ``path``, and where."""
        diags = Diagnostics()
        v = self.version(version)
        table = v.condition_table if kw.pop("in_conditions", False) else v.functions
        parse(snippet, table, diags, path)
        assert len(diags.items) == 1, [str(d) for d in diags]
        (found,) = diags.items
        return found.message, found.path

    def error_at(
        self, snippet: Any, version: str = LATEST, *, path: Path = AT, **data: Any
    ) -> tuple[str, Path]:
        """The evaluation error of ``snippet`` parsed at ``path``, and where."""
        resolver = DictResolver(**data)
        v = self.version(version)
        diags = Diagnostics()
        tree = parse(snippet, v.functions, diags, path)
        assert not diags.items, [str(d) for d in diags]
        with pytest.raises(ExpressionError) as info:
            resolve(expand(tree, resolver), resolver)
        return info.value.message, info.value.path

    def evaluate(
        self,
        snippet: Any,
        version: str = LATEST,
        resolver: DictResolver | None = None,
        *,
        in_conditions: bool = False,
        **data: Any,
    ) -> Any:
        resolver = resolver if resolver is not None else DictResolver(**data)
        tree = self.tree(snippet, version, in_conditions=in_conditions)
        return resolve(expand(tree, resolver), resolver)

    def error(self, snippet: Any, version: str = LATEST, **kw: Any) -> str:
        with pytest.raises(ExpressionError) as info:
            self.evaluate(snippet, version, **kw)
        return info.value.message

    def resolver(self, **data: Any) -> DictResolver:
        return DictResolver(**data)

    def scope(self, version: str = LATEST, **names: Any) -> DictScope:
        return DictScope(self.version(version), **names)

    def diagnostics(self, tree: Any, version: str = LATEST, **names: Any) -> Diagnostics:
        diags = Diagnostics()
        validate(tree, self.scope(version, **names), diags)
        return diags

    def validate(
        self, snippet: Any, version: str = LATEST, *, in_conditions: bool = False, **names: Any
    ) -> list[str]:
        tree = self.tree(snippet, version, in_conditions=in_conditions)
        return [d.message for d in self.diagnostics(tree, version, **names)]


@pytest.fixture
def hot() -> Hot:
    return Hot()
