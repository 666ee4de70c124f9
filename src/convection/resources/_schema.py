"""Property and attribute schemas: what a resource type declares it accepts.

A schema is a value, checked when it is built: a plugin with a contradictory
schema (``update_allowed`` and ``immutable`` together, a nested schema on a
string, a default its own constraints reject) fails at import, not in the
middle of somebody's stack update. The rules are Heat's
(``heat/engine/properties.py`` and ``constraints.py``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from convection.common import JSON
from convection.hot import Constraint

# Re-exported: schemas are written with these names.
from convection.resources._types import HEAT_TYPE_NAMES as HEAT_TYPE_NAMES
from convection.resources._types import PropertyType as PropertyType
from convection.resources._validate import validate_value


class SchemaError(ValueError):
    """A plugin declared an impossible schema. A bug in the plugin, never user input."""


class AttributeType(enum.StrEnum):
    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    MAP = "map"
    LIST = "list"


@dataclass(frozen=True, slots=True, kw_only=True)
class PropertySchema:
    """One property: its type, whether it is required, its default, its
    constraints and how a change to it is applied (in place when
    ``update_allowed``, refused when ``immutable``, otherwise by replacement).

    ``schema`` is, for a ``map``, the schema of each named member; for a
    ``list``, the schema every item must match (a list of maps is a list whose
    item schema is a map schema).
    """

    type: PropertyType
    description: str = ""
    default: JSON = None
    required: bool = False
    constraints: tuple[Constraint, ...] = ()
    update_allowed: bool = False
    immutable: bool = False
    schema: PropertySchema | Mapping[str, PropertySchema] | None = None
    #: Accepted but not shown in type listings (Heat's ``support_status: HIDDEN``).
    hidden: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.type, PropertyType):
            raise SchemaError(f"invalid property type {self.type!r}")
        if self.update_allowed and self.immutable:
            raise SchemaError("options update_allowed and immutable cannot both be true")
        object.__setattr__(self, "constraints", tuple(self.constraints))
        self._check_nested()
        for constraint in self.constraints:
            if not constraint.fits_type(self.heat_type):
                name = type(constraint).__name__
                raise SchemaError(f"{name} constraint invalid for {self.type.value}")
        self._check_default()

    def _check_nested(self) -> None:
        nested = self.schema
        if nested is None:
            return
        if self.type is PropertyType.LIST:
            if not isinstance(nested, PropertySchema):
                raise SchemaError("a list's schema is the schema of its items")
        elif self.type is PropertyType.MAP:
            if not isinstance(nested, Mapping):
                raise SchemaError("a map's schema is a mapping of member schemas")
            # Frozen means frozen: nobody may add a member after the fact.
            object.__setattr__(self, "schema", MappingProxyType(dict(nested)))
        else:
            raise SchemaError(f"schema valid only for list or map, not {self.type.value}")

    def _check_default(self) -> None:
        if self.default is None:
            return
        # Custom constraints are skipped, as Heat skips them for defaults:
        # they may need a service that is not there when the schema is built.
        _, diags = validate_value(self, self.default, ("default",), skip_custom=True)
        if diags:
            raise SchemaError(f"invalid default {self.default!r} ({diags[0].message})")

    @property
    def heat_type(self) -> str:
        """The type as Heat's property schemas name it (``Integer``, ``Map``)."""
        return HEAT_TYPE_NAMES[self.type]

    @property
    def members(self) -> Mapping[str, PropertySchema] | None:
        """A map's member schemas, or ``None``."""
        return self.schema if isinstance(self.schema, Mapping) else None

    @property
    def item(self) -> PropertySchema | None:
        """A list's item schema, or ``None``."""
        return self.schema if isinstance(self.schema, PropertySchema) else None

    def to_api(self) -> dict[str, JSON]:
        """The form Heat's ``resource-type-show`` prints."""
        out: dict[str, JSON] = {"type": self.type.value}
        if self.description:
            out["description"] = self.description
        if self.default is not None:
            out["default"] = self.default
        out["required"] = self.required
        out["update_allowed"] = self.update_allowed
        out["immutable"] = self.immutable
        if self.constraints:
            out["constraints"] = [c.to_api() for c in self.constraints]
        if self.item is not None:
            out["schema"] = {"*": self.item.to_api()}
        elif self.members is not None:
            out["schema"] = {k: v.to_api() for k, v in self.members.items()}
        return out


@dataclass(frozen=True, slots=True)
class AttributeSchema:
    """One attribute a resource type offers to ``get_attr``.

    ``type`` is documentation and a hint for consumers; Heat only warns when
    a value does not match it, and so do we.
    """

    description: str = ""
    type: AttributeType | None = None

    def to_api(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"description": self.description}
        if self.type is not None:
            out["type"] = self.type.value
        return out


#: Attributes every resource has in Heat, whatever its type.
BASE_ATTRIBUTES: Mapping[str, AttributeSchema] = MappingProxyType(
    {"show": AttributeSchema("Detailed information about resource.", AttributeType.MAP)}
)


def schema_to_api(schema: Mapping[str, PropertySchema]) -> dict[str, JSON]:
    """A whole properties schema, hidden properties left out (as Heat does)."""
    return {k: v.to_api() for k, v in schema.items() if not v.hidden}
