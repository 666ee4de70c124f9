"""Heat environment files: their sections, how several merge, and the
resource registry.

An environment changes how a template runs without changing the template:
parameter values, ``parameter_defaults`` for every nested template, type
aliases and template resources, hooks and restricted actions. Users keep
them in many files (TripleO passes dozens), so the merge rules decide what
a stack *is*; they are reproduced from Heat rather than redesigned.

For ``openstack stack create -e a.yaml -e b.yaml`` the client sends every
file and Heat merges them on the server (``heat/common/environment_util.py``);
the client's own deep merge is then ignored. Server-side merging is:

- ``parameters`` and ``parameter_defaults``: per key, with the strategy the
  key first got (``parameter_merge_strategies``, default ``overwrite``);
  keys the templates do not declare are dropped once the section is non-empty.
- every other section: a shallow update of the top level, skipping nulls. So a
  later ``resource_registry.resources`` replaces an earlier one whole, and a
  null only removes entries when it comes from the first file with a registry.

The registry itself (lookup order, wildcards, hooks) is in ``_env_registry``
and re-exported here.
"""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from convection.common import (
    DEFAULT_LIMITS,
    JSON,
    Diagnostic,
    Diagnostics,
    InvalidInput,
    Mark,
    Path,
    Severity,
)
from convection.hot._env_registry import (
    HOOK_TYPES,
    RESTRICTED_ACTIONS,
    TEMPLATE_SUFFIXES,
    RegistryEntry,
    ResourceRegistry,
    is_template_name,
    kind_of,
)
from convection.hot.loader import Document, SourceMap, too_deep

__all__ = [
    "DEEP_MERGE",
    "ENCRYPTED_PARAM_NAMES",
    "EVENT_SINKS",
    "HOOK_TYPES",
    "MERGE",
    "MERGE_STRATEGIES",
    "OVERWRITE",
    "PARAMETERS",
    "PARAMETER_DEFAULTS",
    "PARAMETER_MERGE_STRATEGIES",
    "RESOURCE_REGISTRY",
    "RESTRICTED_ACTIONS",
    "SECTIONS",
    "TEMPLATE_SUFFIXES",
    "Environment",
    "RegistryEntry",
    "ResourceRegistry",
    "environment_from_dict",
    "is_template_name",
    "merge_environments",
    "parse_environment",
]

SECTIONS = (
    PARAMETERS,
    RESOURCE_REGISTRY,
    PARAMETER_DEFAULTS,
    ENCRYPTED_PARAM_NAMES,
    EVENT_SINKS,
    PARAMETER_MERGE_STRATEGIES,
) = (
    "parameters",
    "resource_registry",
    "parameter_defaults",
    "encrypted_param_names",
    "event_sinks",
    "parameter_merge_strategies",
)
MERGE_STRATEGIES = (OVERWRITE, MERGE, DEEP_MERGE) = ("overwrite", "merge", "deep_merge")

_MAPPING_SECTIONS = (PARAMETERS, PARAMETER_DEFAULTS, RESOURCE_REGISTRY, PARAMETER_MERGE_STRATEGIES)


@dataclass(frozen=True, slots=True)
class Environment:
    """One environment file, or the merge of several."""

    parameters: Mapping[str, JSON] = field(default_factory=dict)
    parameter_defaults: Mapping[str, JSON] = field(default_factory=dict)
    resource_registry: ResourceRegistry = field(default_factory=ResourceRegistry.empty)
    encrypted_param_names: tuple[str, ...] = ()
    event_sinks: tuple[Mapping[str, JSON], ...] = ()
    #: A file's own strategies; after a merge, the strategy each key ended with.
    parameter_merge_strategies: Mapping[str, str] = field(default_factory=dict)
    name: str = field(default="<environment>", compare=False)
    #: (section,) or (section, key) -> the file that supplied it.
    origins: Mapping[tuple[str, ...], SourceMap] = field(
        default_factory=dict, compare=False, repr=False
    )

    def mark(self, path: Path) -> Mark | None:
        for size in (2, 1):
            source = self.origins.get(tuple(str(p) for p in path[:size]))
            if source is not None:
                return source.mark(path)
        return None

    def diagnostic(self, message: str, path: Path) -> Diagnostic:
        return Diagnostic(message, path, self.mark(path))

    def user_env_as_dict(self) -> dict[str, JSON]:
        """Heat's ``user_env_as_dict``: what template validate shows."""
        return {
            RESOURCE_REGISTRY: self.resource_registry.as_dict(),
            PARAMETERS: copy.deepcopy(dict(self.parameters)),
            PARAMETER_DEFAULTS: copy.deepcopy(dict(self.parameter_defaults)),
            EVENT_SINKS: [copy.deepcopy(dict(s)) for s in self.event_sinks],
        }

    def env_as_dict(self) -> dict[str, JSON]:
        """Heat's ``env_as_dict``: what is stored with a stack."""
        return {**self.user_env_as_dict(), ENCRYPTED_PARAM_NAMES: list(self.encrypted_param_names)}

    def to_api(self) -> dict[str, JSON]:
        return self.user_env_as_dict()


def _wrong_section(section: str) -> str:
    close = difflib.get_close_matches(section, SECTIONS, n=1)
    hint = f'did you mean "{close[0]}"?' if close else "allowed: " + ", ".join(SECTIONS)
    return f'environment has wrong section "{section}" ({hint})'


def _section_ok(section: str, value: JSON, doc: Document, diags: Diagnostics) -> bool:
    """Shape checks Heat skips (it fails later with a server error)."""
    where = doc.source
    if section in _MAPPING_SECTIONS:
        if not isinstance(value, dict):
            diags.add(
                where.diagnostic(
                    f'environment section "{section}" must be a mapping, not {kind_of(value)}',
                    (section,),
                )
            )
            return False
        if section == PARAMETER_MERGE_STRATEGIES:
            _check_strategies(value, doc, diags)
        return True
    if not isinstance(value, list):
        diags.add(
            where.diagnostic(
                f'environment section "{section}" must be a list, not {kind_of(value)}', (section,)
            )
        )
        return False
    ok = True
    for i, item in enumerate(value):
        if section == ENCRYPTED_PARAM_NAMES and not isinstance(item, str):
            message = f"encrypted_param_names must list parameter names, not {kind_of(item)}"
        elif section == EVENT_SINKS and not (
            isinstance(item, dict) and isinstance(item.get("type"), str)
        ):
            message = 'an event sink must be a mapping with a "type" (such as zaqar-queue)'
        else:
            continue
        diags.add(where.diagnostic(message, (section, i)))
        ok = False
    return ok


def _check_strategies(value: dict[str, JSON], doc: Document, diags: Diagnostics) -> None:
    default = value.get("default", OVERWRITE)
    for key, strategy in value.items():
        if strategy not in MERGE_STRATEGIES:
            fallback = OVERWRITE if key == "default" else default
            diags.add(
                Diagnostic(
                    f'unknown merge strategy "{strategy}" for "{key}"; Heat uses '
                    f'"{fallback if fallback in MERGE_STRATEGIES else OVERWRITE}" instead '
                    f"(allowed: {', '.join(MERGE_STRATEGIES)})",
                    (PARAMETER_MERGE_STRATEGIES, key),
                    doc.source.mark((PARAMETER_MERGE_STRATEGIES, key)),
                    severity=Severity.WARNING,
                )
            )


def parse_environment(doc: Document, diags: Diagnostics) -> Environment:
    """Check one environment file's sections as Heat's environment_format does."""
    values: dict[str, JSON] = {}
    for section, value in doc.data.items():
        if section not in SECTIONS:
            diags.add(doc.source.diagnostic(_wrong_section(section), (section,)))
        elif value is None:
            diags.add(
                doc.source.diagnostic(f'environment has empty section "{section}"', (section,))
            )
        elif _section_ok(section, value, doc, diags):
            values[section] = value
    origins: dict[tuple[str, ...], SourceMap] = {(s,): doc.source for s in values}
    for section in _MAPPING_SECTIONS:
        origins.update({(section, k): doc.source for k in values.get(section, {})})
    registry_data: dict[str, JSON] = values.get(RESOURCE_REGISTRY, {})
    registry = ResourceRegistry.from_data(
        registry_data, origins={k: doc.source for k in registry_data}, diags=diags
    )
    return Environment(
        parameters=dict(values.get(PARAMETERS, {})),
        parameter_defaults=dict(values.get(PARAMETER_DEFAULTS, {})),
        resource_registry=registry,
        encrypted_param_names=tuple(values.get(ENCRYPTED_PARAM_NAMES, ())),
        event_sinks=tuple(values.get(EVENT_SINKS, ())),
        parameter_merge_strategies=dict(values.get(PARAMETER_MERGE_STRATEGIES, {})),
        name=doc.name,
        origins=origins,
    )


def environment_from_dict(
    data: Mapping[str, JSON], diags: Diagnostics, name: str = "<environment>"
) -> Environment:
    """An environment from API data or a stored ``env_as_dict`` (no source file)."""
    return parse_environment(Document(name, dict(data), SourceMap(name)), diags)


# --- merging several files ----------------------------------------------------

_ABSENT: Any = object()
_TYPE_NAMES = {
    "string": "string",
    "number": "number",
    "comma_delimited_list": "comma_delimited_list",
    "commadelimitedlist": "comma_delimited_list",
    "json": "json",
    "boolean": "boolean",
}


def _merge_map(old: JSON, new: dict[str, JSON], deep: bool) -> JSON:
    """environment_util.merge_map; where Heat would crash, the new value wins."""
    if not old:
        return new
    out = dict(old)
    for key, value in new.items():
        if value is None:
            continue  # a null never removes a key here
        before = out.get(key)
        if not deep:
            out[key] = value
        elif isinstance(value, dict):
            out[key] = _merge_map(before, value, True) if isinstance(before, dict) else value
        elif isinstance(value, list):
            out[key] = _merge_list(before, value) if before else value
        elif isinstance(value, str):
            out[key] = (before if isinstance(before, str) else "") + value
        else:
            out[key] = value
    return out


def _merge_list(old: JSON, new: JSON) -> JSON:
    """Lists extend; comma-delimited strings join with a comma."""
    if not isinstance(new, (str, list)):
        raise ValueError(f"Invalid parameter in environment: {kind_of(new)} is not a list.")
    if old is _ABSENT or not old:
        return new
    if isinstance(old, str) and isinstance(new, str):
        return f"{old},{new}"
    if not isinstance(old, (str, list)):
        raise ValueError(f"Invalid parameter in environment: cannot extend {kind_of(old)}.")
    return _as_list(old) + _as_list(new)


def _as_list(value: str | list[JSON]) -> list[JSON]:
    return value.split(",") if isinstance(value, str) else list(value)


def _merge_json(old: JSON, new: JSON, deep: bool) -> JSON:
    limit = DEFAULT_LIMITS.max_document_depth
    too_nested = f"Invalid parameter in environment: JSON nested more than {limit} levels deep."
    try:
        value = json.loads(new) if isinstance(new, str) else json.loads(json.dumps(new))
        if isinstance(old, str):
            old = json.loads(old) if old else {}
    except (ValueError, TypeError) as exc:
        raise ValueError(f"Invalid parameter in environment {exc}.") from None
    except RecursionError:
        raise ValueError(too_nested) from None
    if too_deep(value, limit) is not None or too_deep(old, limit) is not None:
        raise ValueError(too_nested)  # merging and every later phase recurse per level
    before = {} if old is _ABSENT or old is None else old
    if not before:
        return value
    if not isinstance(before, dict) or not isinstance(value, dict):
        raise ValueError("Invalid parameter in environment: only JSON objects can be merged.")
    return _merge_map(before, value, deep)


def _merge_value(kind: str, key: str, old: JSON, new: JSON, deep: bool) -> JSON:
    if kind == "json":
        return _merge_json(old, new, deep)
    if kind == "comma_delimited_list":
        return _merge_list(old, new)
    if kind == "string" and isinstance(new, str) and (old is _ABSENT or isinstance(old, str)):
        return ("" if old is _ABSENT else old) + new
    if kind == "string":
        raise ValueError(
            f'Invalid parameter in environment: cannot merge {kind_of(new)} into "{key}".'
        )
    if kind == "number" and isinstance(new, str) and isinstance(old, str):
        return old + new  # Heat adds the values, which for strings concatenates
    if kind == "number":
        raise ValueError(
            f'Invalid parameter in environment: Heat cannot merge number parameter "{key}" '
            "(it only concatenates numbers written as strings); use overwrite"
        )
    raise ValueError(f"Invalid merge strategy 'merge' for parameter '{key}'.")


class _ParameterMerger:
    """environment_util.merge_parameters across files: a key keeps the strategy
    it first got; a later file naming a different one is a conflict."""

    def __init__(self, param_types: Mapping[str, str] | None, diags: Diagnostics) -> None:
        self.param_types = param_types
        self.diags = diags
        self.recorded: dict[str, str] = {}
        self.origins: dict[tuple[str, ...], SourceMap] = {}

    def strategy(self, env: Environment, key: str) -> str:
        own = env.parameter_merge_strategies
        default = own.get("default", OVERWRITE)
        default = default if default in MERGE_STRATEGIES else OVERWRITE
        chosen = own.get(key, self.recorded.get(key, default))
        return chosen if chosen in MERGE_STRATEGIES else default

    def kind(self, key: str, value: JSON) -> str:
        declared = (self.param_types or {}).get(key)
        if declared is not None:
            return _TYPE_NAMES.get(declared.lower(), "boolean")
        for types, name in ((bool, "boolean"), ((int, float), "number"), (dict, "json")):
            if isinstance(value, types):
                return name
        return "comma_delimited_list" if isinstance(value, list) else "string"

    def merge(self, old: dict[str, JSON], env: Environment, section: str) -> dict[str, JSON]:
        new = env.parameters if section == PARAMETERS else env.parameter_defaults
        wanted = [
            k
            for k, v in new.items()
            if v is not None and (self.param_types is None or k in self.param_types)
        ]
        for key in wanted:
            self.record(env, section, key)
        if not old:  # Heat takes the first non-empty section as it is
            self.origins.update(
                {(section, k): s for k in new if (s := env.origins.get((section, k)))}
            )
            return dict(new)
        out = dict(old)
        for key in wanted:
            out[key] = self.combine(env, section, key, out.get(key, _ABSENT), new[key])
            if source := env.origins.get((section, key)):
                self.origins[(section, key)] = source
        return out

    def record(self, env: Environment, section: str, key: str) -> None:
        strategy = self.strategy(env, key)
        first = self.recorded.setdefault(key, strategy)
        if strategy != first:
            own = key in env.parameter_merge_strategies
            self.diags.add(
                env.diagnostic(
                    f"Conflicting merge strategy '{strategy}' for parameter '{key}' in file "
                    f"'{env.name}'. (an earlier file chose '{first}')",
                    (PARAMETER_MERGE_STRATEGIES, key) if own else (section, key),
                )
            )

    def combine(self, env: Environment, section: str, key: str, old: JSON, new: JSON) -> JSON:
        strategy = self.recorded[key]
        if strategy == OVERWRITE:
            return new
        try:
            return _merge_value(self.kind(key, new), key, old, new, strategy == DEEP_MERGE)
        except ValueError as exc:
            self.diags.add(env.diagnostic(str(exc), (section, key)))
            return new


def merge_environments(
    envs: Sequence[Environment],
    *,
    param_types: Mapping[str, str] | None = None,
    user_parameters: Mapping[str, JSON] | None = None,
    diags: Diagnostics | None = None,
) -> Environment:
    """Merge environment files in command-line order, as Heat's server does.

    ``param_types`` maps every parameter the template *and its nested
    templates* declare to its type (Heat's ``all_param_schemata``); with it,
    undeclared keys from later files are dropped as Heat drops them, and
    ``merge`` knows how to join values. Without it every key is kept and the
    type is read off the value. ``user_parameters`` (``--parameter``) start
    the ``parameters`` section, so an environment file overrides them, as in
    Heat. Errors go to ``diags``; without ``diags`` they raise InvalidInput.
    """
    own = Diagnostics() if diags is None else diags
    merger = _ParameterMerger(param_types, own)
    params: dict[str, JSON] = dict(user_parameters or {})
    defaults: dict[str, JSON] = {}
    registry: dict[str, JSON] = {}
    registry_origins: dict[str, SourceMap] = {}
    sinks: list[Mapping[str, JSON]] = []
    encrypted: list[str] = []
    for env in envs:
        if env.parameters:
            params = merger.merge(params, env, PARAMETERS)
        if env.parameter_defaults:
            defaults = merger.merge(defaults, env, PARAMETER_DEFAULTS)
        raw = env.resource_registry.raw
        fresh = not registry
        for key, value in raw.items():
            if fresh or value is not None:  # later nulls are skipped, not applied
                registry[key] = value
                if (source := env.resource_registry.origins.get(key)) is not None:
                    registry_origins[key] = source
        # Heat fails on a second non-empty list section; appending is the evident intent.
        sinks.extend(env.event_sinks)
        encrypted.extend(n for n in env.encrypted_param_names if n not in encrypted)
    if diags is None and own.has_errors:
        raise InvalidInput(own.items)
    origins = dict(merger.origins)
    origins.update({(RESOURCE_REGISTRY, k): s for k, s in registry_origins.items()})
    return Environment(
        parameters=params,
        parameter_defaults=defaults,
        resource_registry=ResourceRegistry.from_data(registry, origins=registry_origins),
        encrypted_param_names=tuple(encrypted),
        event_sinks=tuple(sinks),
        parameter_merge_strategies=dict(merger.recorded),
        name=" + ".join(e.name for e in envs) or "<environment>",
        origins=origins,
    )
