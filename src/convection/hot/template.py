"""A loaded document becomes a :class:`Template`.

This is where the version is chosen and its rules applied: which top-level
sections and resource/output keys are allowed, and which function table
parses each part. Everything is parsed into expression trees here, once.
Nothing is evaluated: parameter values and conditions come later, in
:mod:`convection.model.definition`.

Error wording follows Heat's where Heat's says what was expected; every
problem is a located :class:`Diagnostic`, and all of them are reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from convection.common import Diagnostics, Path
from convection.hot import functions
from convection.hot.cfn_format import spell_as_hot
from convection.hot.functions.base import Function, FunctionTable, Invalid
from convection.hot.functions.cfn import Mappings, MappingTable
from convection.hot.loader import Document, SourceMap
from convection.hot.parameters import (
    ParameterGroup,
    ParameterSchema,
    parse_parameter_groups,
    parse_parameters,
)
from convection.hot.stored import CFN_VERSION_KEYS
from convection.hot.versions import (
    TemplateVersion,
    all_versions,
    cfn_version,
    cfn_versions,
    get_version,
)

VERSION_KEY = "heat_template_version"
_RESOURCES = "resources"
_OUTPUTS = "outputs"
_CONDITIONS = "conditions"


@dataclass(frozen=True, slots=True)
class ResourceSnippet:
    """One entry of the resources section, parsed but not evaluated."""

    name: str
    type: str
    properties: Any
    metadata: Any
    depends_on: tuple[str, ...]
    deletion_policy: Any
    update_policy: Any
    description: str | None
    external_id: Any
    condition: Any
    path: Path


@dataclass(frozen=True, slots=True)
class OutputSnippet:
    name: str
    value: Any
    description: Any
    condition: Any
    path: Path


@dataclass(frozen=True, slots=True)
class Template:
    version: TemplateVersion
    description: Any
    parameters: dict[str, ParameterSchema]
    parameter_groups: list[ParameterGroup]
    conditions: dict[str, Any]
    resources: dict[str, ResourceSnippet]
    outputs: dict[str, OutputSnippet]
    source: SourceMap
    raw: dict[str, Any]
    files: Mapping[str, str] = field(default_factory=dict)


def _version(doc: Document, diags: Diagnostics) -> TemplateVersion | None:
    data = doc.data
    present = [k for k in (VERSION_KEY, *CFN_VERSION_KEYS) if isinstance(data.get(k), str)]
    if len(present) > 1:  # Heat's template.get_version
        explanation = f"Ambiguous versions ({', '.join(present)})"
        diags.add(
            doc.source.diagnostic(f"The template version is invalid: {explanation}", (present[1],))
        )
        return None
    key = next((k for k in (VERSION_KEY, *CFN_VERSION_KEYS) if k in data), None)
    if key is None:
        diags.add(doc.source.diagnostic("Template format version not found.", ()))
        return None
    raw = data[key]
    version = get_version(raw) if key == VERSION_KEY else cfn_version(key, raw)
    if version is None:
        known = all_versions() if key == VERSION_KEY else cfn_versions(key)
        names = ", ".join(v.name for v in known)
        diags.add(
            doc.source.diagnostic(
                f'The template version is invalid: "{key}: {raw}". '
                f'"{key}" should be one of: {names}',
                (key,),
            )
        )
    return version


class _Parser:
    """Parses the sections of one document with one version's rules."""

    def __init__(self, doc: Document, version: TemplateVersion, diags: Diagnostics) -> None:
        self.doc = doc
        self.source = doc.source
        self.version = version
        self.diags = diags
        self.functions: FunctionTable = version.functions
        self.conditions: FunctionTable = condition_table(version)
        if version.is_cfn:  # Fn::FindInMap reads the template's Mappings
            mappings = doc.data.get("mappings")
            found = Mappings(mappings if isinstance(mappings, dict) else {})
            self.functions = MappingTable(version.functions, found)
            self.conditions = MappingTable(version.condition_table, found)

    def error(self, message: str, path: Path) -> None:
        self.diags.add(self.source.diagnostic(message, path))

    def warn(self, message: str, path: Path, key: str) -> None:
        where = (*path, key)
        self.diags.warning(message, where, self.source.mark(where))

    def warn_unknown(self, name: str, path: Path) -> None:
        from convection.hot.functions.tables import introduced_in

        since = introduced_in(name)
        if since is None or name in self.version.functions:
            return
        if self.version.is_cfn:
            reason = "it is a HOT function, not a CloudFormation one"
        else:
            reason = f"it was introduced in {since}"
        self.diags.warning(
            f"{name!r} is not a function in {self.version.version_key} {self.version.name} "
            f"({reason}), so it is treated as plain data",
            path,
            self.source.mark(path),
        )

    def parse(self, snippet: Any, path: Path, table: FunctionTable | None = None) -> Any:
        sub = Diagnostics()
        tree = functions.parse(
            snippet,
            self.functions if table is None else table,
            sub,
            path,
            on_unknown=self.warn_unknown,
        )
        for d in sub:  # parse errors carry a path; give them the file mark
            self.diags.add(self.source.diagnostic(d.message, d.path) if d.is_error else d)
        return tree

    def parse_condition(self, snippet: Any, path: Path) -> Any:
        return self.parse(snippet, path, self.conditions)

    def sections(self) -> None:
        for key in self.doc.data:
            if key not in self.version.sections:
                self.error(f"The template section is invalid: {key}", (key,))

    def section(self, name: str) -> Any:
        value = self.doc.data.get(name)
        return {} if value is None else value

    def mapping_section(self, name: str, entry: str) -> dict[str, Any]:
        value = self.section(name)
        if not isinstance(value, dict):
            self.error(
                f'"{name}" must contain a map of {entry} maps. '
                f"Found a [{_type_name(value)}] instead",
                (name,),
            )
            return {}
        return value


def condition_table(version: TemplateVersion) -> FunctionTable:
    """Heat parses the conditions section with the condition functions; any
    other function of the version is invalid there (and reported as such)."""
    if version.is_cfn:
        return version.condition_table
    table: dict[str, type[Function]] = {
        name: fn if fn.__name__ == "Removed" else _NotInConditions
        for name, fn in version.functions.items()
    }
    table.update(version.condition_functions)
    return table


class _NotInConditions(Invalid):
    """A function that exists in the version but not in condition context."""

    __slots__ = ()

    def __init__(self, name: str, args: Any, path: Path) -> None:
        from convection.hot.functions.base import ArgumentError

        raise ArgumentError(f'The function "{name}" is invalid in this context')


def _type_name(value: Any) -> str:
    return {dict: "map", list: "list", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


def _resource(p: _Parser, name: str, data: Any) -> ResourceSnippet | None:
    path: Path = (_RESOURCES, name)
    if not isinstance(data, dict):
        if not data:
            p.error("Each resource must contain a type key.", path)
        else:
            p.error(
                f'"{_RESOURCES}" must contain a map of resource maps. '
                f"Found a [{_type_name(data)}] instead",
                path,
            )
        return None
    ok = True
    for key in data:
        if key not in p.version.resource_keys:
            ok = False
            newer = [v.name for v in all_versions() if key in v.resource_keys]
            hint = f" ({key} needs {VERSION_KEY} {newer[0]} or later)" if newer else ""
            p.error(
                f'"{key}" is not a valid keyword inside a resource definition{hint}', (*path, key)
            )
    if "type" not in data:
        p.error("Each resource must contain a type key.", path)
        return None
    rtype = data["type"]
    if not isinstance(rtype, str):
        p.error(f"Resource {name} type type must be string", (*path, "type"))
        ok = False
    if "/" in name:
        p.error('Resource name may not contain "/"', path)
        ok = False
    fields = _resource_fields(p, name, data, path)
    if fields is None or not ok:
        return None
    return ResourceSnippet(name=name, type=rtype, path=path, **fields)


def _checked(
    p: _Parser,
    data: dict[str, Any],
    key: str,
    path: Path,
    expect: str,
    types: tuple[type, ...],
    *,
    parse: str = "functions",
) -> Any:
    if key not in data or data[key] is None:
        return None
    kpath = (*path, key)
    if parse == "none":
        value = data[key]
    elif parse == "condition":
        value = p.parse_condition(data[key], kpath)
    else:
        value = p.parse(data[key], kpath)
    if not isinstance(value, (*types, Function)):
        # Heat's words (HOTemplate20130523 validate_resource_key_type).
        p.error(f"Resource {path[-1]} {key} type must be {expect}", kpath)
        raise _Skip
    return value


class _Skip(Exception):
    pass


def _resource_fields(
    p: _Parser, name: str, data: dict[str, Any], path: Path
) -> dict[str, Any] | None:
    try:
        properties = _checked(p, data, "properties", path, "object", (dict,))
        metadata = _checked(p, data, "metadata", path, "object", (dict,))
        update_policy = _checked(p, data, "update_policy", path, "object", (dict,))
        deletion_policy = _checked(p, data, "deletion_policy", path, "string", (str,))
        description = _checked(p, data, "description", path, "string", (str,), parse="none")
        external_id = _checked(p, data, "external_id", path, "string", (str,))
        condition = _checked(
            p, data, "condition", path, "string or boolean", (str, bool), parse="condition"
        )
        depends = _depends_on(p, data, path)
    except _Skip:
        return None
    if isinstance(deletion_policy, str) and deletion_policy not in p.version.deletion_policies:
        allowed = ", ".join(sorted(p.version.deletion_policies))
        p.error(
            f'Invalid deletion policy "{deletion_policy}" (expected one of: {allowed})',
            (*path, "deletion_policy"),
        )
        deletion_policy = None  # reported; keep checking the rest of the resource
    return {
        "properties": {} if properties is None else properties,
        "metadata": metadata,
        "depends_on": depends,
        "deletion_policy": deletion_policy,
        "update_policy": update_policy,
        "description": description,
        "external_id": external_id,
        "condition": condition,
    }


def _depends_on(p: _Parser, data: dict[str, Any], path: Path) -> tuple[str, ...]:
    raw = data.get("depends_on")
    kpath = (*path, "depends_on")
    if raw is None:
        return ()
    if isinstance(raw, str):
        return (raw,)
    if not isinstance(raw, list):
        p.error(f"Resource {path[-1]} depends_on type must be list or string", kpath)
        raise _Skip
    for i, dep in enumerate(raw):
        if not isinstance(dep, str):
            p.error(f"Resource {path[-1]} depends_on must be a list of strings", (*kpath, i))
            raise _Skip
    return tuple(raw)


def _output(p: _Parser, name: str, data: Any) -> OutputSnippet | None:
    path: Path = (_OUTPUTS, name)
    if not isinstance(data, dict):
        if not data:
            p.error("Each output must contain a value key.", path)
        else:
            p.error(
                f'"{_OUTPUTS}" must contain a map of output maps. '
                f"Found a [{_type_name(data)}] instead",
                path,
            )
        return None
    for key in data:  # Heat's outputs() reads the keys it knows and no others
        if key not in p.version.output_keys:
            p.warn(f'"{key}" is not a key of an output in this version; it is ignored', path, key)
    if "value" not in data:
        p.error("Each output must contain a value key.", path)
        return None
    condition = None
    if data.get("condition") is not None and "condition" in p.version.output_keys:
        condition = p.parse_condition(data["condition"], (*path, "condition"))
    return OutputSnippet(
        name=name,
        value=p.parse(data["value"], (*path, "value")),
        description=data.get("description"),
        condition=condition,
        path=path,
    )


def _conditions(p: _Parser) -> dict[str, Any]:
    if _CONDITIONS not in p.version.sections:
        return {}
    raw = p.section(_CONDITIONS)
    if not isinstance(raw, dict):
        p.error(
            f"Condition definitions must be a map. Found a {_type_name(raw)} instead",
            (_CONDITIONS,),
        )
        return {}
    return {n: p.parse_condition(c, (_CONDITIONS, n)) for n, c in raw.items()}


def parse_template(
    doc: Document, *, files: Mapping[str, str] | None = None
) -> tuple[Template | None, Diagnostics]:
    """Check a document's sections and keys and parse it into trees.

    Returns ``None`` for the template only when no version could be chosen;
    otherwise a template is returned even with errors, so later phases can
    report their own problems too (callers must check the diagnostics).
    """
    diags = Diagnostics()
    diags.extend(doc.warnings)
    version = _version(doc, diags)
    if version is None:
        return None, diags
    raw = doc.data
    if version.is_cfn:
        doc = spell_as_hot(doc, version, diags)
    p = _Parser(doc, version, diags)
    p.sections()
    params = parse_parameters(p.section("parameters"), version, doc.source, diags)
    groups = parse_parameter_groups(p.section("parameter_groups"), params, doc.source, diags)
    resources = {}
    resource_data = p.mapping_section(_RESOURCES, "resource")
    for name, data in resource_data.items():
        snippet = _resource(p, name, data)
        if snippet is not None:
            resources[name] = snippet
    outputs = {}
    for name, data in p.mapping_section(_OUTPUTS, "output").items():
        out = _output(p, name, data)
        if out is not None:
            outputs[name] = out
    for dup in sorted(set(params) & set(resource_data)):
        p.error(
            f"Duplicate names {{'{dup}'}}: a parameter and a resource share a name",
            (_RESOURCES, dup),
        )
    template = Template(
        version=version,
        description=doc.data.get("description", ""),
        parameters=params,
        parameter_groups=groups,
        conditions=_conditions(p),
        resources=resources,
        outputs=outputs,
        source=doc.source,
        raw=raw,
        files=dict(files or {}),
    )
    return template, diags
