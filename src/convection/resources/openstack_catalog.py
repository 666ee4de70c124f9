"""Heat's OpenStack and AWS resource types, schema only: names, properties, attributes.

Why this exists: ``convection template validate`` must accept exactly what
Heat's template-validate accepts. Users' templates name Heat's cloud types
(``OS::Nova::Server``, ``OS::Neutron::Port``, ``OS::Cinder::Volume``,
``AWS::EC2::Instance`` ...). Heat knows those names, refuses a property a
type does not declare ("Unknown Property x") and a ``get_attr`` of an
attribute the type does not declare. Convection cannot *create* any of them,
there is no OpenStack behind it: running such a template needs a
``resource_registry`` mapping in the environment onto a Convection type. But
validating one must not fail just because the type is not a Convection
plugin, and must fail where Heat would. This catalog holds the facts for
that, read from Heat's source (see :mod:`.openstack_catalog_data`).

How to read an entry:

* ``properties is None`` / ``attributes is None``: not catalogued (only the
  name is known); accept any property / attribute rather than guess.
* ``placeholder``: Heat removed the real plugin and left a ``NoneResource``
  stand-in that takes any properties and answers any attribute.
* ``dynamic_attributes``: Heat overrides ``get_attribute`` for the type
  (groups, deployments, nested stacks), so its validation accepts any
  attribute name; the declared ones are listed all the same.
* ``status`` is Heat's support status. Hidden types are still registered:
  Heat validates and creates them, it only leaves them out of
  ``resource-type-list`` and its documentation. Hidden and deprecated
  properties are likewise still accepted.
* ``registered_by_default`` is False for the few types Heat registers only
  when an operator option is set; with default settings Heat refuses them
  as an unknown resource type.

Convection's own plugins (``OS::Heat::None``, ``Value``, ``RandomString``,
``Delay``, ``TestResource``) take precedence over these entries; the
catalog lists their names only so that it is complete.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from convection.resources import openstack_catalog_data as _data
from convection.resources._schema import PropertyType

__all__ = [
    "OpenStackType",
    "PropSpec",
    "SupportStatus",
    "lookup",
    "names",
    "resolve_alias",
]


class SupportStatus(enum.StrEnum):
    """Heat's ``support_status`` values for a resource type."""

    SUPPORTED = "SUPPORTED"
    DEPRECATED = "DEPRECATED"
    UNSUPPORTED = "UNSUPPORTED"
    HIDDEN = "HIDDEN"


@dataclass(frozen=True, slots=True)
class PropSpec:
    """One top-level property: its schema type and whether it is required.

    ``hidden`` marks a property Heat hides by its support status (usually
    one renamed long ago); Heat still accepts it.
    """

    type: PropertyType
    required: bool = False
    hidden: bool = False


_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class OpenStackType:
    """What Heat's validation knows of one resource type."""

    name: str
    properties: Mapping[str, PropSpec] | None
    #: Declared attribute names, ``show`` included; ``None`` when not catalogued.
    attributes: frozenset[str] | None
    status: SupportStatus = SupportStatus.SUPPORTED
    dynamic_attributes: bool = False
    placeholder: bool = False
    registered_by_default: bool = True
    #: Old (hidden) property name -> the property Heat translates it onto.
    renamed: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    note: str = ""

    @property
    def hidden(self) -> bool:
        return self.status is SupportStatus.HIDDEN

    @property
    def catalogued(self) -> bool:
        """True when the property names are known (an unknown one is an error)."""
        return self.properties is not None and not self.placeholder

    @property
    def required_properties(self) -> frozenset[str]:
        if self.properties is None:
            return frozenset()
        return frozenset(k for k, v in self.properties.items() if v.required)

    def accepts_property(self, name: str) -> bool:
        """Whether Heat would take ``name`` in this type's ``properties``."""
        if not self.catalogued:
            return True
        assert self.properties is not None
        return name in self.properties

    def accepts_attribute(self, name: str) -> bool:
        """Whether Heat's validation would take ``get_attr: [res, name, ...]``."""
        if self.placeholder or self.dynamic_attributes or self.attributes is None:
            return True
        return name in self.attributes

    def missing_required(self, given: Iterable[str]) -> tuple[str, ...]:
        """Required properties absent from ``given``, in sorted order.

        A hidden old name counts for the property Heat translates it onto
        (``network_id`` for a port's ``network``), as Heat's translation
        rules run before the required check.
        """
        present = set(given)
        present |= {new for old, new in self.renamed.items() if old in present}
        return tuple(sorted(self.required_properties - present))


_TYPE_CODES: Mapping[str, PropertyType] = MappingProxyType(
    {
        "s": PropertyType.STRING,
        "i": PropertyType.INTEGER,
        "n": PropertyType.NUMBER,
        "b": PropertyType.BOOLEAN,
        "m": PropertyType.MAP,
        "l": PropertyType.LIST,
    }
)


def _parse_props(type_name: str, spec: str) -> Mapping[str, PropSpec]:
    props: dict[str, PropSpec] = {}
    for token in spec.split():
        required = token.endswith("!")
        hidden = token.endswith("~")
        body = token[:-1] if required or hidden else token
        prop, sep, code = body.rpartition(":")
        if not sep or not prop or code not in _TYPE_CODES:
            raise ValueError(f"{type_name}: bad property spec {token!r}")
        if prop in props:
            raise ValueError(f"{type_name}: property {prop!r} listed twice")
        props[prop] = PropSpec(_TYPE_CODES[code], required=required, hidden=hidden)
    return MappingProxyType(props)


def _parse_renamed(
    type_name: str, spec: str, props: Mapping[str, PropSpec] | None
) -> Mapping[str, str]:
    if not spec:
        return _EMPTY
    renamed: dict[str, str] = {}
    for pair in spec.split():
        old, sep, new = pair.partition(">")
        if not sep or props is None or old not in props or new not in props:
            raise ValueError(f"{type_name}: bad rename {pair!r}")
        renamed[old] = new
    return MappingProxyType(renamed)


def _build(raw: _data.Raw) -> OpenStackType:
    props = None if raw.props is None else _parse_props(raw.name, raw.props)
    attrs = None if raw.attrs is None else frozenset(raw.attrs.split()) | {"show"}
    if raw.placeholder and (props is not None or attrs is not None):
        raise ValueError(f"{raw.name}: a placeholder takes anything; give it no schema")
    return OpenStackType(
        name=raw.name,
        properties=props,
        attributes=attrs,
        status=SupportStatus(raw.status),
        dynamic_attributes=raw.dynamic,
        placeholder=raw.placeholder,
        registered_by_default=raw.default,
        renamed=_parse_renamed(raw.name, raw.renamed, props),
        note=raw.note,
    )


def _build_all(raws: Iterable[_data.Raw]) -> Mapping[str, OpenStackType]:
    table: dict[str, OpenStackType] = {}
    for raw in raws:
        if raw.name in table:
            raise ValueError(f"resource type {raw.name} listed twice")
        table[raw.name] = _build(raw)
    return MappingProxyType(table)


_CATALOG: Mapping[str, OpenStackType] = _build_all(_data.ALL)


def resolve_alias(name: str) -> str:
    """The name Heat's default environment maps ``name`` onto
    (``OS::Quantum::Net`` is ``OS::Neutron::Net``); ``name`` itself otherwise."""
    for old, new in _data.PREFIX_ALIASES:
        if name.startswith(old):
            return new + name[len(old) :]
    return name


def lookup(name: str, *, follow_aliases: bool = True) -> OpenStackType | None:
    """The catalog entry for a Heat type name, or ``None`` if Heat has no such type.

    With ``follow_aliases`` the default environment's ``OS::Quantum*``
    mapping applies first, as it does in a stock Heat deployment; the entry
    returned then carries its Neutron name.
    """
    entry = _CATALOG.get(name)
    if entry is None and follow_aliases:
        entry = _CATALOG.get(resolve_alias(name))
    return entry


def names(*, include_hidden: bool = True) -> list[str]:
    """Every catalogued type name, sorted (aliases not included)."""
    return sorted(n for n, t in _CATALOG.items() if include_hidden or not t.hidden)
