"""The template version registry.

One :class:`TemplateVersion` per ``heat_template_version`` value, and one
per CloudFormation-format version (``AWSTemplateFormatVersion: 2010-09-09``,
``HeatTemplateFormatVersion: 2012-12-12``). A version decides the function
table for resources and outputs, the function table for the ``conditions``
section, which top-level sections, resource keys, output
keys and parameter keys are allowed, and the small feature switches later
phases consult. Aliases (``newton``, ``ocata``, ...) map to the same object.

The rules are Heat's template classes (``heat/engine/hot/template.py``) and
parameter schemas (``heat/engine/hot/parameters.py``) as data; the function
tables live in :mod:`convection.hot.functions.tables`.

A CloudFormation version is read through the same parser: its document is
first spelled in HOT's section and key names (:mod:`convection.hot.cfn`), so
its ``sections``, ``resource_keys`` and ``output_keys`` here are HOT's names
for what that format has; ``parameter_keys`` are its own (``Type``,
``NoEcho``, ``MinLength``...), which :mod:`convection.hot.parameters` reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from convection.hot.functions.base import FunctionTable
from convection.hot.functions.cfn import Removed
from convection.hot.functions.tables import (
    CFN_CONDITION_FUNCTIONS,
    CFN_CONDITIONS_TABLES,
    CFN_FUNCTIONS,
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
    #: The top-level key that names this version in a template.
    version_key: str = "heat_template_version"
    #: ``hot``, or ``cfn`` for the CloudFormation formats (Heat's list says so).
    format: str = "hot"

    @property
    def key(self) -> str:
        """The key Heat lists it under: ``heat_template_version.2016-10-14``."""
        return f"{self.version_key}.{self.name}"

    @property
    def is_cfn(self) -> bool:
        return self.format == "cfn"

    def is_pseudo_parameter(self, name: str) -> bool:
        """A parameter every stack has: HOT's ``OS::`` names, CloudFormation's
        ``AWS::StackId``, ``AWS::StackName`` and ``AWS::Region``."""
        return name in CFN_PSEUDO_PARAMETERS if self.is_cfn else name.startswith("OS::")

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

#: Heat's ``CfnParameters.PSEUDO_PARAMETERS``.
CFN_PSEUDO_PARAMETERS = ("AWS::StackId", "AWS::StackName", "AWS::Region")
#: Heat's CloudFormation parameter schema keys (``heat/engine/parameters.py``).
CFN_PARAMETER_KEYS = frozenset(
    {
        "Type",
        "Default",
        "NoEcho",
        "AllowedValues",
        "AllowedPattern",
        "MaxLength",
        "MinLength",
        "MaxValue",
        "MinValue",
        "Description",
        "ConstraintDescription",
        "Label",
    }
)


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


def _make_cfn(name: str, version_key: str) -> TemplateVersion:
    """Heat's ``CfnTemplate`` (2010-09-09: conditions and ``Fn::If``) or
    ``HeatTemplate`` (2012-12-12: neither), spelled in HOT's names."""
    conditions = name in CFN_CONDITIONS_TABLES
    base = frozenset(
        {"type", "properties", "metadata", "depends_on", "deletion_policy", "update_policy"}
    )
    return TemplateVersion(
        name=name,
        aliases=(),
        functions=CFN_FUNCTIONS[name],
        condition_functions=CFN_CONDITION_FUNCTIONS.get(name, MappingProxyType({})),
        sections=frozenset({"description", "mappings", "parameters", "resources", "outputs"})
        | ({"conditions"} if conditions else set()),
        resource_keys=base | {"description"} | ({"condition"} if conditions else set()),
        output_keys=frozenset({"description", "value"} | ({"condition"} if conditions else set())),
        parameter_keys=CFN_PARAMETER_KEYS,
        deletion_policies=_POLICIES,
        order=-1,
        condition_table=CFN_CONDITIONS_TABLES.get(name, MappingProxyType({})),
        features=frozenset({"conditions"}) if conditions else frozenset(),
        version_key=version_key,
        format="cfn",
    )


_ALL = tuple(_make(i, name) for i, name in enumerate(VERSIONS))
_BY_NAME = {v.name: v for v in _ALL} | {a: v for v in _ALL for a in v.aliases}
#: (version key, value) -> version, as Heat's ``template_mapping``.
_CFN = {
    ("AWSTemplateFormatVersion", "2010-09-09"): _make_cfn("2010-09-09", "AWSTemplateFormatVersion"),
    ("HeatTemplateFormatVersion", "2012-12-12"): _make_cfn(
        "2012-12-12", "HeatTemplateFormatVersion"
    ),
}


def get_version(name_or_alias: object) -> TemplateVersion | None:
    """The version a ``heat_template_version`` value names, or None.

    Only the exact strings Heat registers are accepted (``2016-10-14``,
    ``newton``); the loader keeps YAML dates as strings, so a bare date works.
    """
    if not isinstance(name_or_alias, str):
        return None
    return _BY_NAME.get(name_or_alias)


def cfn_version(key: str, value: object) -> TemplateVersion | None:
    """The CloudFormation-format version ``key: value`` names, or None."""
    return _CFN.get((key, value)) if isinstance(value, str) else None


def cfn_versions(key: str | None = None) -> list[TemplateVersion]:
    """The CloudFormation-format versions (those under ``key`` only, if given)."""
    return [v for (k, _), v in _CFN.items() if key is None or k == key]


def version_by_key(key: str) -> TemplateVersion | None:
    """The version of a listed key: ``heat_template_version.newton``,
    ``AWSTemplateFormatVersion.2010-09-09``."""
    prefix, _, name = key.partition(".")
    if prefix == "heat_template_version":
        return get_version(name)
    return cfn_version(prefix, name)


def all_versions(*, cfn: bool = False) -> list[TemplateVersion]:
    """Every HOT version, oldest first; with ``cfn``, the CloudFormation
    formats first, as Heat's version list puts them."""
    return [*(_CFN.values() if cfn else ()), *_ALL]


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
