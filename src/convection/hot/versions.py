"""The template version registry.

One :class:`TemplateVersion` per ``heat_template_version`` value. A version
decides the function table for resources and outputs, the function table for
the ``conditions`` section, which top-level sections, resource keys, output
keys and parameter keys are allowed, and the small feature switches later
phases consult. Aliases (``newton``, ``ocata``, ...) map to the same object.

The rules are Heat's template classes (``heat/engine/hot/template.py``) and
parameter schemas (``heat/engine/hot/parameters.py``) as data; the function
tables live in :mod:`convection.hot.functions.tables`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from convection.hot.functions.base import FunctionTable
from convection.hot.functions.cfn import Removed
from convection.hot.functions.tables import (
    CONDITION_FUNCTIONS,
    CONDITION_TABLES,
    FUNCTIONS,
    VERSIONS,
)


@dataclass(frozen=True, slots=True, eq=False)
class TemplateVersion:
    """One version's rules. Compared by identity: each exists once."""

    name: str
    aliases: tuple[str, ...]
    #: Functions allowed in resources and outputs (parameter defaults are not parsed).
    functions: FunctionTable
    #: Heat's ``condition_functions``: the functions meant for conditions.
    condition_functions: FunctionTable
    sections: frozenset[str]
    resource_keys: frozenset[str]
    output_keys: frozenset[str]
    parameter_keys: frozenset[str]
    #: Accepted spellings; newton added lowercase ones for the same three.
    deletion_policies: frozenset[str]
    #: Position in the ordered list of versions; newer is larger.
    order: int = 0
    #: The table conditions and ``if`` conditions are parsed with: condition
    #: functions, other functions refused, removed ones reported as removed.
    condition_table: FunctionTable = field(default_factory=lambda: MappingProxyType({}))
    #: Keys allowed in one entry of a parameter's ``constraints`` list.
    constraint_keys: frozenset[str] = frozenset()
    #: Feature switches, see :data:`FEATURES`.
    features: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        """The ``heat_template_version`` key Heat reports: ``heat_template_version.2016-10-14``."""
        return f"heat_template_version.{self.name}"

    def has_feature(self, name: str) -> bool:
        return name in self.features

    def canonical_deletion_policy(self, name: str) -> str | None:
        """``Delete``, ``Retain`` or ``Snapshot`` for an accepted spelling."""
        return name.capitalize() if name in self.deletion_policies else None

    def __repr__(self) -> str:
        return f"<TemplateVersion {self.name}>"


#: version -> its release name, also accepted as heat_template_version.
_ALIASES = {
    "2016-10-14": "newton",
    "2017-02-24": "ocata",
    "2017-09-01": "pike",
    "2018-03-02": "queens",
    "2018-08-31": "rocky",
    "2021-04-16": "wallaby",
}
#: feature -> first version that has it.
FEATURES = {
    "get_attr_all_attributes": "2015-10-15",
    "list_join_multiple": "2015-10-15",
    "str_replace_json": "2015-10-15",
    "conditions": "2016-10-14",
    "external_id": "2016-10-14",
    "lowercase_deletion_policies": "2016-10-14",
    "repeat_maps": "2016-10-14",
    "modulo_constraint": "2017-02-24",
    "repeat_permutations": "2017-09-01",
    "conditions_yaql_contains": "2017-09-01",
    "parameter_tags": "2018-03-02",
    "if_without_else": "2021-04-16",
}

_SECTIONS = frozenset(
    {
        "heat_template_version",
        "description",
        "parameter_groups",
        "parameters",
        "resources",
        "outputs",
    }
)
_RESOURCE_KEYS = frozenset(
    {
        "type",
        "properties",
        "metadata",
        "depends_on",
        "deletion_policy",
        "update_policy",
        "description",
    }
)
_OUTPUT_KEYS = frozenset({"description", "value"})
# ``immutable`` belongs to HOT's parameter schema itself, so every version has it.
_PARAMETER_KEYS = frozenset(
    {"type", "description", "default", "schema", "constraints", "hidden", "label", "immutable"}
)
_CONSTRAINT_KEYS = frozenset(
    {"description", "length", "range", "allowed_values", "allowed_pattern", "custom_constraint"}
)
_POLICIES = frozenset({"Delete", "Retain", "Snapshot"})


def _make(order: int, name: str) -> TemplateVersion:
    def since(feature: str) -> bool:
        return name >= FEATURES[feature]

    conditions = since("conditions")
    return TemplateVersion(
        name=name,
        aliases=(_ALIASES[name],) if name in _ALIASES else (),
        functions=FUNCTIONS[name],
        condition_functions=CONDITION_FUNCTIONS[name],
        sections=_SECTIONS | ({"conditions"} if conditions else set()),
        resource_keys=_RESOURCE_KEYS | ({"external_id", "condition"} if conditions else set()),
        output_keys=_OUTPUT_KEYS | ({"condition"} if conditions else set()),
        parameter_keys=_PARAMETER_KEYS | ({"tags"} if since("parameter_tags") else set()),
        deletion_policies=_POLICIES
        | ({p.lower() for p in _POLICIES} if since("lowercase_deletion_policies") else set()),
        order=order,
        condition_table=CONDITION_TABLES[name],
        constraint_keys=_CONSTRAINT_KEYS | ({"modulo"} if since("modulo_constraint") else set()),
        features=frozenset(f for f in FEATURES if since(f)),
    )


_ALL = tuple(_make(i, name) for i, name in enumerate(VERSIONS))
_BY_NAME = {v.name: v for v in _ALL} | {a: v for v in _ALL for a in v.aliases}


def get_version(name_or_alias: object) -> TemplateVersion | None:
    """The version a ``heat_template_version`` value names, or None.

    Only the exact strings Heat registers are accepted (``2016-10-14``,
    ``newton``); the loader keeps YAML dates as strings, so a bare date works.
    """
    if not isinstance(name_or_alias, str):
        return None
    return _BY_NAME.get(name_or_alias)


def all_versions() -> list[TemplateVersion]:
    """Every version, oldest first."""
    return list(_ALL)


def latest_version() -> TemplateVersion:
    return _ALL[-1]


def function_descriptions(
    version: TemplateVersion, *, with_condition_functions: bool = False
) -> list[dict[str, str]]:
    """What Heat's ``template function list`` shows: every function of the
    version but the removed ones, then (optionally) the condition functions."""
    tables = [version.functions]
    if with_condition_functions:
        tables.append(version.condition_functions)
    listed: dict[str, str] = {}
    for table in tables:
        for name, fn in table.items():
            if fn is not Removed:
                listed[name] = fn.summary
    return [{"functions": name, "description": text} for name, text in listed.items()]
