"""HOT parameters: schemas, coercion, groups, pseudo-parameters and values.

Everything follows Heat (``heat/engine/parameters.py``, ``hot/parameters.py``,
``parameter_groups.py``, ``api.py``), including its error wording, because
users and scripts compare messages and the template-validate output.

One departure, for secrets: a hidden parameter's value is ``******`` in error
messages, reprs, and the validate output's ``Default`` and ``Value``; Heat
shows it in all of those.

:func:`parse_parameters` reads the section with the version's key rules and
checks each template default against its constraints (as Heat does on every
validate); :func:`resolve_parameters` picks, coerces and checks each value
and adds the pseudo-parameters, giving the immutable :class:`ParameterValues`
every later phase reads.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NoReturn
from urllib.parse import quote

from convection.common import DEFAULT_LIMITS, Diagnostic, Diagnostics, Path
from convection.hot import constraints as con
from convection.hot.constraints import MASK, Constraint
from convection.hot.loader import SourceMap, too_deep
from convection.hot.stored import CFN_PARAMETER_TYPES
from convection.hot.versions import CFN_PSEUDO_PARAMETERS, TemplateVersion

PARAMETER_TYPES = ("string", "number", "comma_delimited_list", "json", "boolean")
#: Type names in Heat's template-validate output.
_API_NAMES = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")
API_TYPES = dict(zip(PARAMETER_TYPES, _API_NAMES, strict=True))
STACK_ID = "OS::stack_id"
STACK_NAME = "OS::stack_name"
PROJECT_ID = "OS::project_id"
PSEUDO_PARAMETERS = (STACK_ID, STACK_NAME, PROJECT_ID)
CFN_STACK_ID, CFN_STACK_NAME, CFN_REGION = CFN_PSEUDO_PARAMETERS
#: Heat's fixed ``AWS::Region``.
CFN_DEFAULT_REGION = "ap-southeast-1"
#: The first version whose parameters may use the ``modulo`` constraint.
MODULO_SINCE = "2017-02-24"
TAGS_SINCE = "2018-03-02"

_SECTION = "parameters"
_GROUPS = "parameter_groups"
#: Heat reads constraints against the value as given for these types and
#: against the parsed value for lists and JSON.
_CHECK_RAW = frozenset({"string", "number", "boolean"})


@dataclass(frozen=True, slots=True, repr=False)
class ParameterSchema:
    """One parameter's definition.

    ``valid`` is False when the definition itself was reported broken, and
    ``default_valid`` when its default failed its constraints; later phases
    use them so a reported problem is not reported again as a missing value.
    ``hidden`` and ``immutable`` follow Heat's truthiness (the string
    ``"false"`` is true there; :func:`parse_parameters` warns about it).
    """

    name: str
    type: str
    label: Any = None
    description: Any = None
    default: Any = None
    hidden: bool = False
    immutable: bool = False
    tags: tuple[Any, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    valid: bool = field(default=True, compare=False)
    default_valid: bool = field(default=True, compare=False)

    @property
    def required(self) -> bool:
        """Heat: a parameter without a (non-null) default must be given."""
        return self.default is None

    def __repr__(self) -> str:
        default = MASK if self.hidden and self.default is not None else repr(self.default)
        return (
            f"ParameterSchema(name={self.name!r}, type={self.type!r}, default={default}, "
            f"hidden={self.hidden}, immutable={self.immutable}, "
            f"constraints={self.constraints!r})"
        )


@dataclass(frozen=True, slots=True)
class _Sink:
    """Where problems go, located through the source map when there is one."""

    source: SourceMap | None
    diags: Diagnostics

    def error(self, message: str, path: Path, *, upstream: bool = False) -> None:
        mark = None if self.source is None else self.source.mark(path)
        self.diags.add(Diagnostic(message, path, mark, upstream=upstream))

    def warn(self, message: str, path: Path) -> None:
        self.diags.warning(message, path, None if self.source is None else self.source.mark(path))

    def errors_since(self, start: int) -> bool:
        return any(d.is_error for d in self.diags.items[start:])


def parse_parameters(
    section_data: Any, version: TemplateVersion, source: SourceMap, diags: Diagnostics
) -> dict[str, ParameterSchema]:
    """Read the ``parameters`` section. Every name gets a schema, even a
    broken one (``valid=False``), so that a value supplied for it is not
    reported again as unknown."""
    out = _Sink(source, diags)
    if section_data is None:
        return {}
    if not isinstance(section_data, dict):
        kinds: dict[type, str] = {dict: "map", list: "list", str: "string"}
        found = kinds.get(type(section_data), type(section_data).__name__)
        message = f"Found a [{found}] instead"
        out.error(f'"{_SECTION}" must contain a map of parameter maps. {message}', (_SECTION,))
        return {}
    return {name: _parse_one(name, data, version, out) for name, data in section_data.items()}


def _parse_one(name: str, data: Any, version: TemplateVersion, out: _Sink) -> ParameterSchema:
    """One parameter in either format: its keys checked against the
    version's, its schema read, then its default against its constraints."""
    path: Path = (_SECTION, name)
    if not isinstance(data, dict):
        out.error(f"Invalid parameter ({name}), expected a mapping", path)
        return ParameterSchema(name, "", valid=False)
    start = len(out.diags)
    for key in data:
        if key not in version.parameter_keys:
            out.error(f"Invalid key '{key}' for parameter ({name})", (*path, key))
            if key == "tags" and not version.is_cfn:
                out.warn(f"tags needs heat_template_version {TAGS_SINCE} or later", (*path, key))
    read = _cfn_schema if version.is_cfn else _hot_schema
    schema = read(name, data, version, out)
    schema = dataclasses.replace(schema, valid=schema.valid and not out.errors_since(start))
    error = _default_error(schema) if schema.valid and schema.default is not None else None
    if error is None:
        return schema
    out.error(error, (*path, "Default" if version.is_cfn else "default"))
    return dataclasses.replace(schema, default_valid=False)


def _hot_schema(
    name: str, data: dict[str, Any], version: TemplateVersion, out: _Sink
) -> ParameterSchema:
    path: Path = (_SECTION, name)
    ptype, tags = data.get("type"), data.get("tags", [])
    if "type" not in data:
        out.error(f"Missing parameter type for parameter: {name}", path)
    if "tags" in version.parameter_keys and not isinstance(tags, list):
        out.error(f"Tags property should be a list for parameter: {name}", (*path, "tags"))
    parsed = _constraints(name, data, ptype, version, out)
    if "type" in data and ptype not in PARAMETER_TYPES:
        out.error(f"Invalid type ({ptype})", (*path, "type"))
    _warn_flags(data, path, out)
    return ParameterSchema(
        name=name,
        type=ptype if isinstance(ptype, str) else "",
        label=data.get("label"),
        description=data.get("description"),
        default=data.get("default"),
        hidden=bool(data.get("hidden", False)),
        immutable=bool(data.get("immutable", False)),
        tags=tuple(tags) if isinstance(tags, list) else (),
        constraints=parsed or (),
        valid=parsed is not None,
    )


def _cfn_schema(
    name: str, data: dict[str, Any], version: TemplateVersion, out: _Sink
) -> ParameterSchema:
    """A CloudFormation parameter (Heat's ``parameters.Schema.from_dict``):
    ``Type: String``, ``NoEcho``, and constraints as flat keys."""
    path: Path = (_SECTION, name)
    ptype = data.get("Type")
    if "Type" not in data:
        out.error(f"Missing parameter type for parameter: {name}", path)
    elif ptype not in CFN_PARAMETER_TYPES:
        out.error(f"Invalid type ({ptype})", (*path, "Type"))
    kind = CFN_PARAMETER_TYPES.get(ptype, "") if isinstance(ptype, str) else ""
    return ParameterSchema(
        name=name,
        type=kind,
        label=data.get("Label"),
        description=data.get("Description"),
        default=data.get("Default"),
        hidden=str(data.get("NoEcho", "false")).lower() == "true",
        constraints=_cfn_constraints(name, data, kind, out),
    )


def _cfn_constraints(
    name: str, data: dict[str, Any], kind: str, out: _Sink
) -> tuple[Constraint, ...]:
    """Range, Length, AllowedValues and AllowedPattern, in Heat's order, all
    sharing ``ConstraintDescription``; a bad one is reported and left out."""
    desc = data.get("ConstraintDescription")
    desc = desc if desc is None or isinstance(desc, str) else str(desc)
    found: list[Constraint] = []
    for keys in _CFN_CONSTRAINT_KEYS:
        given = [k for k in keys if k in data]
        if not given:
            continue
        where: Path = (_SECTION, name, given[0])
        try:
            constraint = _cfn_constraint(keys, data, desc)
        except (con.InvalidConstraint, ValueError, TypeError) as exc:
            out.error(str(exc), where)
            continue
        if kind and not constraint.fits_type(kind):
            what = f"{type(constraint).__name__} constraint invalid for {API_TYPES[kind]}"
            out.error(f"Parameter '{name}' is invalid: {what}", where)
            continue
        found.append(constraint)
    return tuple(found)


#: The flat keys of each CloudFormation constraint, in the order Heat adds them.
_CFN_CONSTRAINT_KEYS = (
    ("MinValue", "MaxValue"),
    ("MinLength", "MaxLength"),
    ("AllowedValues",),
    ("AllowedPattern",),
)


def _cfn_constraint(keys: tuple[str, ...], data: dict[str, Any], desc: str | None) -> Constraint:
    if keys == ("AllowedValues",):
        return con.AllowedValues(data["AllowedValues"], description=desc)
    if keys == ("AllowedPattern",):
        return con.AllowedPattern(data["AllowedPattern"], description=desc)
    low, high = (_cfn_number(data.get(k)) for k in keys)  # Heat's Schema.get_num
    if keys == ("MinValue", "MaxValue"):
        return con.Range(low, high, description=desc)
    return con.Length(low, high, description=desc)


def _cfn_number(raw: Any) -> Any:
    return None if raw is None else con.str_to_num(raw)


def _constraints(
    name: str, data: dict[str, Any], ptype: Any, version: TemplateVersion, out: _Sink
) -> tuple[Constraint, ...] | None:
    raw, path = data.get("constraints"), (_SECTION, name, "constraints")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        out.error(f"Invalid parameter constraints for parameter {name}, expected a list", path)
        return None
    assert out.source is not None
    kind = ptype if ptype in PARAMETER_TYPES else ""
    modulo, prefix = version.name >= MODULO_SINCE, f"Parameter '{name}' is invalid: "
    return con.parse_constraints(
        raw, kind, path, out.source, out.diags, allow_modulo=modulo, fit_prefix=prefix
    )


def _warn_flags(data: dict[str, Any], path: Path, out: _Sink) -> None:
    """Heat takes ``hidden`` and ``immutable`` by truthiness, so ``"false"``
    hides a value; legal, but almost never meant."""
    for key in ("hidden", "immutable"):
        value = data.get(key)
        if value is not None and not isinstance(value, bool):
            verdict = "true" if value else "false"
            out.warn(f"{key} should be a boolean; Heat reads {value!r} as {verdict}", (*path, key))


def _default_error(schema: ParameterSchema) -> str | None:
    """Heat's check of a template default: against the constraints only (not
    the type), custom constraints skipped, a list default split on commas."""
    default = schema.default
    shown = MASK if schema.hidden else str(default)
    prefix = f"Parameter '{schema.name}' is invalid: "
    if schema.type == "comma_delimited_list" and isinstance(default, list):
        default = [str(x) for x in default]
    elif schema.type == "comma_delimited_list" and isinstance(default, str):
        default = default.split(",")
    elif schema.type == "comma_delimited_list":
        return f"{prefix}Default must be a comma-delimited list string: {_no_split(default)}"
    error = con.check_all(
        schema.constraints, default, schema.type, redact=schema.hidden, skip_custom=True
    )
    return None if error is None else f"{prefix}Invalid default {shown} ({error})"


def _no_split(value: Any) -> str:
    return f"'{type(value).__name__}' object has no attribute 'split'"


def coerce(ptype: str, value: Any, *, redact: bool = False) -> Any:
    """A supplied or default value in the parameter's type, as Heat reads it.

    Raises ValueError with Heat's message (without the ``Parameter 'x' is
    invalid:`` prefix). Lists are split on commas and not stripped; a JSON
    value may be text or data, and an empty string stays an empty string.
    """
    if ptype == "number":
        try:
            return con.str_to_num(value)
        except ValueError:
            if redact:
                raise ValueError(f"could not convert string to float: '{MASK}'") from None
            raise
        except TypeError as exc:  # Python's message names only the type
            raise ValueError(str(exc)) from None
    if ptype == "boolean":
        return con.bool_from_string(value, shown=MASK if redact else None)
    if ptype == "comma_delimited_list":
        if isinstance(value, list):
            return [str(x) for x in value]
        if isinstance(value, str):
            return [] if value == "" else value.split(",")
        raise ValueError(f"Value must be a comma-delimited list string: {_no_split(value)}")
    if ptype == "json":
        return _json(value)
    return str(value)


def _json(value: Any) -> Any:
    limit = DEFAULT_LIMITS.max_document_depth
    too_nested = f"Value must be valid JSON nested at most {limit} levels deep"
    try:
        text = value if isinstance(value, str) else json.dumps(value)
        if not text:
            return value
        parsed = json.loads(text)
    except RecursionError:
        raise ValueError(too_nested) from None
    except (ValueError, TypeError) as exc:
        raise ValueError(f"Value must be valid JSON: {exc}") from None
    if too_deep(parsed, limit) is not None:  # later phases walk values recursively
        raise ValueError(too_nested)
    return parsed


class ParameterValues:
    """The coerced values of a stack's parameters, pseudo-parameters included.

    Immutable, and safe to log: ``repr`` and :meth:`redacted` show hidden
    values as ``******``. :meth:`value` hands out copies of lists and maps so
    no reader can change what another reads; :meth:`reveal` is for the store
    and the resolver only.
    """

    __slots__ = ("_hidden", "_identity", "_immutable", "_pseudo", "_values")

    _values: Mapping[str, Any]
    _hidden: frozenset[str]
    _immutable: frozenset[str]
    _pseudo: frozenset[str]
    _identity: tuple[str, str, str]

    def __init__(
        self,
        values: Mapping[str, Any],
        *,
        hidden: Iterable[str] = (),
        immutable: Iterable[str] = (),
        pseudo: Iterable[str] = (),
        identity: tuple[str, str, str] = ("", "", ""),
    ) -> None:
        object.__setattr__(self, "_values", MappingProxyType(copy.deepcopy(dict(values))))
        object.__setattr__(self, "_hidden", frozenset(hidden))
        object.__setattr__(self, "_immutable", frozenset(immutable))
        object.__setattr__(self, "_pseudo", frozenset(pseudo))
        object.__setattr__(self, "_identity", tuple(identity))

    @property
    def identity(self) -> tuple[str, str, str]:
        """The stack's (name, id, project) the pseudo-parameters were made
        from, whichever format spells them (``OS::stack_id``, ``AWS::StackId``)."""
        return self._identity

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("ParameterValues is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("ParameterValues is immutable")

    def value(self, name: str) -> Any:
        """The value; KeyError when the name has none (unknown, or missing
        when resolved non-strictly)."""
        found = self._values[name]
        return copy.deepcopy(found) if isinstance(found, (dict, list)) else found

    def names(self) -> tuple[str, ...]:
        return tuple(self._values)

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def __len__(self) -> int:
        return len(self._values)

    def is_hidden(self, name: str) -> bool:
        return name in self._hidden

    def is_immutable(self, name: str) -> bool:
        return name in self._immutable

    def is_pseudo(self, name: str) -> bool:
        return name in self._pseudo

    def hidden_texts(self) -> tuple[str, ...]:
        """The text forms of the hidden values, longest first, for whoever
        masks them in a message: a string as it is, anything else also as
        JSON, and each string item of a list (a ``comma_delimited_list``
        item is what a script or a message shows)."""
        found: set[str] = set()
        for name in self._hidden:
            if name not in self._values:
                continue
            value = self._values[name]
            if isinstance(value, str):
                found.add(value)
            elif value is not None:
                found.update((json.dumps(value), str(value)))
                if isinstance(value, list):
                    found.update(v for v in value if isinstance(v, str))
        return tuple(sorted((t for t in found if t), key=lambda t: (-len(t), t)))

    def redacted(self) -> dict[str, Any]:
        """Every value, hidden ones as Heat masks them: fit for any output."""
        return {n: MASK if n in self._hidden else copy.deepcopy(v) for n, v in self._values.items()}

    def reveal(self) -> dict[str, Any]:
        """Every value in clear. Only for the store and expression resolution."""
        return copy.deepcopy(dict(self._values))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParameterValues):
            return NotImplemented
        mine = (self._values, self._hidden, self._immutable, self._pseudo)
        return mine == (other._values, other._hidden, other._immutable, other._pseudo)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ParameterValues({self.redacted()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Copies and pickles rebuild through ``__init__``: setattr is closed."""
        flags = (self._hidden, self._immutable, self._pseudo, self._identity)
        return (functools.partial(_rebuild, *flags), (dict(self._values),))


def _rebuild(
    hidden: Any, immutable: Any, pseudo: Any, identity: Any, values: Any
) -> ParameterValues:
    return ParameterValues(
        values, hidden=hidden, immutable=immutable, pseudo=pseudo, identity=identity
    )


#: No value: required and not given, or already reported.
_MISSING: Any = object()


def resolve_parameters(
    schemas: Mapping[str, ParameterSchema],
    supplied: Mapping[str, Any],
    parameter_defaults: Mapping[str, Any],
    *,
    stack_name: str,
    stack_id: str,
    project_id: str,
    source: SourceMap | None = None,
    diags: Diagnostics,
    strict: bool = True,
    cfn: bool = False,
) -> ParameterValues:
    """Choose, coerce and check every parameter's value.

    A user value (``supplied``: the environment's ``parameters``) wins over
    ``parameter_defaults``, which wins over the template default; a ``None``
    at any level counts as not given, as in Heat. A supplied name the template
    does not define is an error; an unknown name in ``parameter_defaults`` is
    ignored (environments are shared between templates).

    ``strict=False`` is Heat's template-validate mode: missing values,
    constraints and number/boolean readings are not checked, but list and
    JSON values must still parse (Heat parses those eagerly). Diagnostics
    point at the template's parameter (``source`` is the template's map).
    ``cfn`` gives a CloudFormation-format template its own pseudo-parameters.
    """
    out = _Sink(source, diags)
    values: dict[str, Any] = pseudo_parameters(
        stack_name=stack_name, stack_id=stack_id, project_id=project_id, cfn=cfn
    )
    pseudo = {n for n in values if n not in schemas}
    for name in supplied:
        if name not in schemas:
            out.error(f"The Parameter ({name}) was not defined in template.", (_SECTION, name))
    for name, schema in schemas.items():
        user = supplied.get(name)
        raw = parameter_defaults.get(name) if user is None else user
        found = _resolve_one(schema, raw, out, strict)
        if found is not _MISSING:
            values[name] = found
    return ParameterValues(
        values,
        hidden=(n for n, s in schemas.items() if s.hidden),
        immutable=(n for n, s in schemas.items() if s.immutable),
        pseudo=pseudo,
        identity=(stack_name, str(stack_id), str(project_id)),
    )


def pseudo_parameters(
    *, stack_name: str, stack_id: str, project_id: str, cfn: bool = False
) -> dict[str, str]:
    """The parameters every stack has, in the order Heat lists them.

    HOT's are ``OS::project_id``, ``OS::stack_id`` and ``OS::stack_name``;
    CloudFormation's (``CfnParameters``) ``AWS::StackId`` (the stack's ARN),
    ``AWS::StackName`` and ``AWS::Region``, whose value Heat fixes at
    ``ap-southeast-1``. A stack without a name (validation) has no name
    parameter, and, in CloudFormation's case, no region either.
    """
    if not cfn:
        values = {PROJECT_ID: str(project_id), STACK_ID: str(stack_id)}
        return values | ({STACK_NAME: stack_name} if stack_name else {})
    if not stack_name:
        return {CFN_STACK_ID: "None"}
    arn = stack_arn(str(project_id), stack_name, str(stack_id))
    return {CFN_STACK_ID: arn, CFN_STACK_NAME: stack_name, CFN_REGION: CFN_DEFAULT_REGION}


def stack_arn(project: str, name: str, stack_id: str) -> str:
    """A stack's ARN, as Heat's ``HeatIdentifier.arn`` spells it."""
    return (
        f"arn:openstack:heat::{quote(project, '')}:stacks/{quote(name, '')}/{quote(stack_id, '')}"
    )


def _resolve_one(schema: ParameterSchema, raw: Any, out: _Sink, strict: bool) -> Any:
    """``raw`` is the user value or, failing that, the ``parameter_defaults`` one."""
    path: Path = (_SECTION, schema.name)
    invalid = f"Parameter '{schema.name}' is invalid"
    if not schema.valid:
        out.error(f"{invalid}: its definition has errors", path, upstream=True)
        return _MISSING
    if raw is None:
        if schema.default is None:
            if strict:
                out.error(f"The Parameter ({schema.name}) was not provided.", path)
            return _MISSING
        if not schema.default_valid:
            out.error(f"{invalid}: its default fails its constraints", path, upstream=True)
            return _MISSING
        raw = schema.default
    try:
        value = coerce(schema.type, raw, redact=schema.hidden)
    except ValueError as exc:
        if strict or schema.type in ("json", "comma_delimited_list"):
            out.error(f"{invalid}: {exc}", path)
        return _MISSING
    if strict:
        checked = raw if schema.type in _CHECK_RAW else value
        error = con.check_all(schema.constraints, checked, schema.type, redact=schema.hidden)
        if error is not None:
            out.error(f"{invalid}: {error}", path)
            return _MISSING
    return value


def changed_immutable(old: ParameterValues, new: ParameterValues) -> list[str]:
    """Immutable parameters whose value an update would change.

    As Heat: only parameters of both stacks count (pseudo-parameters never),
    and immutability is read from the new template. Unlike Heat, coerced
    values are compared, so a new ``"5"`` for an old ``5`` is no change.
    """
    return [
        name
        for name in new.names()
        if new.is_immutable(name)
        and not new.is_pseudo(name)
        and name in old
        and not old.is_pseudo(name)
        and old._values[name] != new._values[name]
    ]


def immutable_error(names: Sequence[str]) -> str:
    """Heat's refusal of an update that changes immutable parameters."""
    return f"The following parameters are immutable and may not be updated: {', '.join(names)}"


@dataclass(frozen=True, slots=True)
class ParameterGroup:
    """One entry of ``parameter_groups``; ``data`` is the entry as written,
    which is what Heat's template-validate returns."""

    label: Any
    description: Any
    parameters: tuple[Any, ...]
    data: dict[str, Any] = field(compare=False)


def _heat_path(items: Sequence[Any]) -> str:
    """How Heat renders a path inside a validation message."""
    out = ""
    for item in items:
        if isinstance(item, int) or (isinstance(item, str) and item.isdigit()):
            out += f"[{item}]"
        elif out:
            out += f".{item}"
        else:
            out = str(item)
    return out


def parse_parameter_groups(
    data: Any,
    parameters: Mapping[str, ParameterSchema],
    source: SourceMap,
    diags: Diagnostics,
) -> list[ParameterGroup]:
    """Heat's rules: a list of groups, each with a ``parameters`` list naming
    defined parameters, none in two groups. Heat counts ``OS::stack_id`` and
    ``OS::project_id`` as defined here (not ``OS::stack_name``)."""
    if not data:
        return []
    out, path = _Sink(source, diags), (_GROUPS,)
    if not isinstance(data, list):
        out.error(f"Parameter Groups error: {_GROUPS}: The {_GROUPS} should be a list.", path)
        return []
    known = set(parameters) | {STACK_ID, PROJECT_ID}
    grouped: list[Any] = []
    groups: list[ParameterGroup] = []
    for i, group in enumerate(data):
        if not isinstance(group, dict):
            message = "Each parameter group must be a mapping."
            out.error(f"Parameter Groups error: {_GROUPS}: {message}", (*path, i))
            continue
        prefix = f"Parameter Groups error: {_heat_path([_GROUPS, group.get('label', '')])}: "
        members = group.get("parameters")
        if members is None:
            message = "The parameters must be provided for each parameter group."
            out.error(prefix + message, (*path, i))
            continue
        if not isinstance(members, list):
            message = "The parameters of parameter group should be a list."
            out.error(prefix + message, (*path, i, "parameters"))
            continue
        for j, member in enumerate(members):
            _check_member(member, known, grouped, prefix, (*path, i, "parameters", j), out)
        label, description = group.get("label"), group.get("description")
        groups.append(ParameterGroup(label, description, tuple(members), dict(group)))
    return groups


def _check_member(
    member: Any, known: set[str], grouped: list[Any], prefix: str, path: Path, out: _Sink
) -> None:
    if member in grouped:  # its reference was checked the first time
        message = f"The {member} parameter must be assigned to one parameter group only."
        out.error(prefix + message, path)
        return
    grouped.append(member)
    if not isinstance(member, str) or member not in known:
        message = f"The grouped parameter {member} does not reference a valid parameter."
        out.error(prefix + message, path)


#: Heat's flattened constraint keys in template-validate output.
_API_BOUNDS: dict[type, tuple[str, str, str, str]] = {
    con.Length: ("min", "max", "MinLength", "MaxLength"),
    con.Range: ("min", "max", "MinValue", "MaxValue"),
    con.Modulo: ("step", "offset", "Step", "Offset"),
}
_API_SINGLE: dict[type, tuple[str, str]] = {
    con.AllowedValues: ("values", "AllowedValues"),
    con.AllowedPattern: ("pattern", "AllowedPattern"),
    con.CustomConstraint: ("name", "CustomConstraint"),
}


def validate_output(
    schemas: Mapping[str, ParameterSchema],
    groups: Sequence[ParameterGroup],
    *,
    supplied: Mapping[str, Any] | None = None,
    parameter_defaults: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``Parameters`` (and, when the template has groups,
    ``ParameterGroups``) of Heat's template-validate response.

    Shape as Heat's ``format_validate_parameter``: constraints are flattened
    into ``MinLength``/``MaxValue``/``AllowedValues``/... keys (a later
    constraint of a kind overrides an earlier), their descriptions joined
    into ``ConstraintDescription``. ``Default`` is the effective default
    (``parameter_defaults`` first); ``Value`` appears only for a truthy
    supplied value. Pseudo-parameters are not listed.

    A hidden parameter's ``Default`` and ``Value`` are shown as given, only
    ``NoEcho`` says it is hidden: Heat's ``format_validate_parameter`` takes
    ``param.default()`` and ``param.user_value``, which never mask (only a
    parameter's text form, ``str(param)``, does). Validate answers whoever
    may read the template, and the template holds that default anyway.
    """
    supplied = supplied or {}
    parameter_defaults = parameter_defaults or {}
    params = {
        name: _api_parameter(schema, supplied.get(name), parameter_defaults.get(name))
        for name, schema in schemas.items()
    }
    out: dict[str, Any] = {"Parameters": params}
    if groups:
        out["ParameterGroups"] = [copy.deepcopy(g.data) for g in groups]
    return out


def _api_parameter(schema: ParameterSchema, user: Any, user_default: Any) -> dict[str, Any]:
    res: dict[str, Any] = {
        "Type": API_TYPES.get(schema.type, schema.type),
        "Description": schema.description or "",
        "NoEcho": "true" if schema.hidden else "false",
        "Label": schema.label or schema.name,
    }
    default = user_default if user_default is not None else schema.default
    if default is not None:
        res["Default"] = copy.deepcopy(default)
    if user:
        res["Value"] = copy.deepcopy(user)
    if schema.tags:
        res["Tags"] = list(schema.tags)
    descriptions: list[str] = []
    for c in schema.constraints:
        if type(c) in _API_BOUNDS:
            lo, hi, lo_key, hi_key = _API_BOUNDS[type(c)]
            for attr, key in ((lo, lo_key), (hi, hi_key)):
                if getattr(c, attr) is not None:
                    res[key] = getattr(c, attr)
        else:
            attr, key = _API_SINGLE[type(c)]
            found = getattr(c, attr)
            res[key] = list(found) if isinstance(found, tuple) else found
        if c.description:
            descriptions.append(c.description)
    if descriptions:
        res["ConstraintDescription"] = " ".join(descriptions)
    return res
