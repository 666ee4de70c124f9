"""Value constraints, checked the way Heat checks them.

Shared by parameters and resource property schemas, so nothing here knows
about parameters. A constraint is a frozen value, built from template data by
:func:`parse_constraints` (Heat's wording, as located diagnostics) or in
Python by a plugin author (:class:`InvalidConstraint` then marks a bug).

A check returns ``None`` or Heat's message, which a ``description`` replaces
unless the value could not even be read (Heat raises those first). With
``redact=True`` the value never appears in a message, as hidden parameters
must not leak (Heat's messages do show them). Type names may be the
parameter ones (``number``, ``json``) or the property ones (``Integer``,
``Map``); messages repeat the name the caller used.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, TypeAlias

from convection.common import JSON, Diagnostics, Path
from convection.hot.custom_constraints import BUILT_INS
from convection.hot.loader import SourceMap

#: What Heat shows instead of a hidden value.
MASK = "******"

#: Heat's schema type names (parameter and property vocabularies) -> kind.
_KIND_NAMES: dict[str, tuple[str, ...]] = {
    "string": ("string", "String"),
    "number": ("number", "Number"),
}
_KIND_NAMES |= {"integer": ("Integer",), "boolean": ("boolean", "Boolean"), "any": ("Any",)}
_KIND_NAMES |= {"list": ("comma_delimited_list", "List"), "map": ("json", "Map")}
_KINDS = {name: kind for kind, names in _KIND_NAMES.items() for name in names}

TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")
FALSE_STRINGS = ("0", "f", "false", "off", "n", "no")


class InvalidConstraint(ValueError):
    """A constraint definition is malformed (Heat's InvalidSchemaError)."""


def str_to_num(value: Any) -> Any:
    """Heat's number reading: numbers pass through (bools too), text tries
    ``int`` then ``float``; raises ValueError/TypeError as Python does."""
    if isinstance(value, numbers.Number):
        return value
    try:
        return int(value)
    except ValueError:
        return float(value)


def bool_from_string(value: Any, *, shown: str | None = None) -> bool:
    """oslo's strict ``bool_from_string``, which Heat uses for booleans."""
    if isinstance(value, bool):
        return value
    text = value if isinstance(value, str) else str(value)
    lowered = text.strip().lower()
    if lowered in TRUE_STRINGS:
        return True
    if lowered in FALSE_STRINGS:
        return False
    acceptable = ", ".join(f"'{s}'" for s in sorted(TRUE_STRINGS + FALSE_STRINGS))
    raise ValueError(
        f"Unrecognized value '{text if shown is None else shown}', "
        f"acceptable values are: {acceptable}"
    )


def to_schema_type(value: Any, type_name: str | None, *, shown: str | None = None) -> Any:
    """Heat's ``Schema.to_schema_type``: how allowed values are compared."""
    kind = _KINDS.get(type_name or "")
    try:
        if kind == "integer":
            num = str_to_num(value)
            if isinstance(num, float):
                raise ValueError(f"{num} is not an integer.")
            return num
        if kind == "number":
            return str_to_num(value)
        if kind == "string":
            return str(value)
        if kind == "boolean":
            return bool_from_string(str(value))
    except ValueError:
        text = str(value) if shown is None else shown
        raise ValueError(f'Value "{text}" is invalid for data type "{type_name}".') from None
    return value


class _Reject(Exception):
    """Raised inside a check when the value cannot be read at all."""


@dataclass(frozen=True, slots=True)
class _Constraint:
    description: str | None = field(default=None, kw_only=True)

    #: The template key, and the kinds of schema it may constrain.
    key: ClassVar[str] = ""
    fits: ClassVar[frozenset[str]] = frozenset()

    def validate(
        self, value: Any, type_name: str | None = None, *, redact: bool = False
    ) -> str | None:
        """``None`` when the value passes, else Heat's message (or the description)."""
        shown = MASK if redact else str(value)
        try:
            error = self._check(value, type_name, shown)
        except _Reject as exc:
            return str(exc)
        except (ValueError, TypeError) as exc:  # the value could not be read
            text = str(exc)
            return text.replace(str(value), MASK) if redact and str(value) else text
        if error is None:
            return None
        return self.description if self.description else error

    def _check(self, value: Any, type_name: str | None, shown: str) -> str | None:
        raise NotImplementedError

    def fits_type(self, type_name: str) -> bool:
        return _KINDS.get(type_name) in self.fits

    def spec(self) -> JSON:
        raise NotImplementedError

    def to_api(self) -> dict[str, Any]:
        """Heat's serialised form, as in resource-type schemas."""
        out: dict[str, Any] = {}
        if self.description is not None:
            out["description"] = self.description
        out[self.key] = self.spec()
        return out


def _num(value: Any, shown: str) -> Any:
    """A number for range and modulo checks; Heat reports the conversion
    error itself (not the description) when the value is not a number."""
    try:
        return str_to_num(value)
    except ValueError as exc:
        if shown == MASK:
            raise _Reject(f"could not convert string to float: '{MASK}'") from None
        raise _Reject(str(exc)) from None


def _check_numeric(*values: Any) -> None:
    for v in values:
        if v is not None and not isinstance(v, (int, float)):
            raise InvalidConstraint("min/max must be numeric")


@dataclass(frozen=True, slots=True)
class Range(_Constraint):
    min: int | float | None = None
    max: int | float | None = None

    key: ClassVar[str] = "range"
    fits: ClassVar[frozenset[str]] = frozenset({"number", "integer"})

    def __post_init__(self) -> None:
        _check_numeric(self.min, self.max)
        if self.min is None and self.max is None:
            raise InvalidConstraint(
                "A range constraint must have a min value and/or a max value specified."
            )

    def _check(self, value: Any, type_name: str | None, shown: str) -> str | None:
        num = _num(value, shown)
        if (self.min is not None and num < self.min) or (self.max is not None and num > self.max):
            return f"{shown} is out of range (min: {self.min}, max: {self.max})"
        return None

    def spec(self) -> JSON:
        return {k: v for k, v in (("min", self.min), ("max", self.max)) if v is not None}


@dataclass(frozen=True, slots=True)
class Length(_Constraint):
    min: int | None = None
    max: int | None = None

    key: ClassVar[str] = "length"
    fits: ClassVar[frozenset[str]] = frozenset({"string", "list", "map"})

    def __post_init__(self) -> None:
        if self.min is None and self.max is None:
            raise InvalidConstraint(
                "A length constraint must have a min value and/or a max value specified."
            )
        _check_numeric(self.min, self.max)
        for v in (self.min, self.max):
            if v is not None and not isinstance(v, int):
                raise InvalidConstraint("min/max length must be integral")

    def _check(self, value: Any, type_name: str | None, shown: str) -> str | None:
        size = len(value)
        if (self.min is not None and size < self.min) or (self.max is not None and size > self.max):
            return f"length ({size}) is out of range (min: {self.min}, max: {self.max})"
        return None

    def spec(self) -> JSON:
        return {k: v for k, v in (("min", self.min), ("max", self.max)) if v is not None}


@dataclass(frozen=True, slots=True)
class Modulo(_Constraint):
    """Only from heat_template_version 2017-02-24; the caller enforces that."""

    step: int | float | None = None
    offset: int | float | None = None

    key: ClassVar[str] = "modulo"
    fits: ClassVar[frozenset[str]] = frozenset({"number", "integer"})

    def __post_init__(self) -> None:
        if self.step is None or self.offset is None:
            raise InvalidConstraint(
                "A modulo constraint must have a step value and an offset value specified."
            )
        for v in (self.step, self.offset):
            if not isinstance(v, (int, float)):
                raise InvalidConstraint("step/offset must be numeric")
            if not (v == v and abs(v) != float("inf") and int(v) == v):  # not NaN, not inf
                raise InvalidConstraint("step/offset must be integer")
        step, offset = int(self.step), int(self.offset)
        if step == 0:
            raise InvalidConstraint("step cannot be 0.")
        if abs(offset) >= abs(step):
            raise InvalidConstraint("offset must be smaller (by absolute value) than step.")
        if step * offset < 0:
            raise InvalidConstraint("step and offset must be both positive or both negative.")

    def _check(self, value: Any, type_name: str | None, shown: str) -> str | None:
        assert self.step is not None
        if _num(value, shown) % self.step != self.offset:
            # Heat's message really ends with a stray parenthesis.
            return f"{shown} is not a multiple of {self.step} with an offset of {self.offset})"
        return None

    def spec(self) -> JSON:
        return {"step": self.step, "offset": self.offset}


@dataclass(frozen=True, slots=True)
class AllowedValues(_Constraint):
    values: Sequence[Any] = ()  # kept as a tuple

    key: ClassVar[str] = "allowed_values"
    fits: ClassVar[frozenset[str]] = frozenset({"string", "integer", "number", "boolean", "list"})

    def __post_init__(self) -> None:
        if not isinstance(self.values, Sequence) or isinstance(self.values, str):
            raise InvalidConstraint("AllowedValues must be a list")
        object.__setattr__(self, "values", tuple(self.values))

    def _check(self, value: Any, type_name: str | None, shown: str) -> str | None:
        if isinstance(value, list):  # a list passes when every item is allowed
            ok = all(v in self.values for v in value)
        elif type_name is not None:
            allowed = tuple(to_schema_type(v, type_name) for v in self.values)
            ok = to_schema_type(value, type_name, shown=shown) in allowed
        else:
            ok = value in self.values
        if ok:
            return None
        allowed_text = ", ".join(str(a) for a in self.values)
        return f'"{shown}" is not an allowed value [{allowed_text}]'

    def spec(self) -> JSON:
        return list(self.values)


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@dataclass(frozen=True, slots=True)
class AllowedPattern(_Constraint):
    """Heat anchors only the start (``re.match``) and then demands the match
    end at the end of the value; that is not ``fullmatch``: ``a|ab`` rejects
    ``ab``, because the first alternative matches and stops short."""

    pattern: str = ""

    key: ClassVar[str] = "allowed_pattern"
    fits: ClassVar[frozenset[str]] = frozenset({"string"})

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise InvalidConstraint("AllowedPattern must be a string")
        try:
            _compiled(self.pattern)
        except re.error as exc:
            raise InvalidConstraint(
                f"AllowedPattern is not a valid regular expression: {exc}"
            ) from None

    def _check(self, value: Any, type_name: str | None, shown: str) -> str | None:
        if not isinstance(value, str):
            raise _Reject(f"expected string or bytes-like object, got '{type(value).__name__}'")
        match = _compiled(self.pattern).match(value)
        if match is None or match.end() != len(value):
            return f'"{shown}" does not match pattern "{self.pattern}"'
        return None

    def spec(self) -> JSON:
        return self.pattern


#: A named check: ``True`` accepts; ``False`` rejects with Heat's plain
#: message; a string rejects and is the reason Heat appends to "Error
#: validating value ..." (empty: no reason).
CustomCheck: TypeAlias = Callable[[Any], "bool | str"]

_CUSTOM: dict[str, CustomCheck] = dict(BUILT_INS)


def register_custom_constraint(name: str, checker: CustomCheck, *, replace: bool = False) -> None:
    """Make ``custom_constraint: <name>`` known. Names are looked up when a
    value is checked, so plugins may register after templates are parsed."""
    if name in _CUSTOM and not replace:
        raise ValueError(f"custom constraint {name!r} is already registered")
    _CUSTOM[name] = checker


def unregister_custom_constraint(name: str) -> None:
    _CUSTOM.pop(name, None)


def custom_constraint_names() -> frozenset[str]:
    return frozenset(_CUSTOM)


@dataclass(frozen=True, slots=True)
class CustomConstraint(_Constraint):
    """An unknown name is not a parse error in Heat: a value checked against it
    fails with "(constraint not found)". Defaults skip these checks."""

    name: str = ""

    key: ClassVar[str] = "custom_constraint"
    fits: ClassVar[frozenset[str]] = frozenset({"string", "integer", "number", "boolean", "list"})

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise InvalidConstraint("CustomConstraint name must be a string")

    def _check(self, value: Any, type_name: str | None, shown: str) -> str | None:
        checker = _CUSTOM.get(self.name)
        if checker is None:
            return f'"{shown}" does not validate {self.name} (constraint not found)'
        verdict = checker(value)
        if verdict is True:
            return None
        if verdict is False:
            return f'"{shown}" does not validate {self.name}'
        reason = str(verdict)
        if shown == MASK and isinstance(value, str) and value:
            reason = reason.replace(value, MASK)
        return f"Error validating value '{shown}'" + (f": {reason}" if reason else "")

    def spec(self) -> JSON:
        return self.name


Constraint: TypeAlias = Length | Range | Modulo | AllowedValues | AllowedPattern | CustomConstraint

#: Heat's precedence when one entry names several constraints (modulo first
#: where the version has it); the rest of the entry is ignored.
_PRECEDENCE: tuple[str, ...] = ("modulo", "range", "length")
_PRECEDENCE += ("allowed_values", "allowed_pattern", "custom_constraint")
_ENTRY_KEYS = ("description", *_PRECEDENCE)
_BOUND_KEYS = {"range": ("min", "max"), "length": ("min", "max"), "modulo": ("step", "offset")}


class _Bad(Exception):
    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


def _sub_mapping(kind: str, cdef: Any, path: Path) -> dict[str, Any]:
    """A range/length/modulo body: a mapping of numbers (Heat's get_num)."""
    if not isinstance(cdef, dict):
        raise _Bad(f"Invalid {kind} constraint, expected a mapping", path)
    for key in cdef:
        if key not in _BOUND_KEYS[kind]:
            raise _Bad(f"Invalid key '{key}' for {kind} constraint", (*path, key))
    out: dict[str, Any] = {}
    for key in _BOUND_KEYS[kind]:
        raw = cdef.get(key)
        try:
            out[key] = None if raw is None else str_to_num(raw)
        except (ValueError, TypeError) as exc:
            raise _Bad(str(exc), (*path, key)) from None
    return out


def _one(entry: Any, path: Path, allow_modulo: bool) -> Constraint:
    if not isinstance(entry, dict):
        raise _Bad("Invalid parameter constraints, expected a mapping", path)
    for key in entry:
        if key not in _ENTRY_KEYS:
            raise _Bad(f"Invalid key '{key}' for parameter constraints", (*path, key))
    kinds = [k for k in _PRECEDENCE if k in entry and (allow_modulo or k != "modulo")]
    if not kinds:
        raise _Bad("No constraint expressed", path)
    kind, desc = kinds[0], entry.get("description")
    desc = desc if desc is None or isinstance(desc, str) else str(desc)
    body, kpath = entry[kind], (*path, kind)
    try:
        if kind in _BOUND_KEYS:
            a, b = _sub_mapping(kind, body, kpath).values()
            if kind == "range":
                return Range(a, b, description=desc)
            if kind == "length":
                return Length(a, b, description=desc)
            return Modulo(a, b, description=desc)
        if kind == "allowed_values":
            return AllowedValues(body, description=desc)
        if kind == "allowed_pattern":
            return AllowedPattern(body, description=desc)
        if isinstance(body, str) and body not in _CUSTOM:
            known = ", ".join(sorted(_CUSTOM))
            raise _Bad(f'Unknown custom_constraint "{body}" (known: {known})', kpath)
        return CustomConstraint(body, description=desc)
    except InvalidConstraint as exc:
        raise _Bad(str(exc), kpath) from None


def _entry_warnings(entry: Any, path: Path, allow_modulo: bool) -> list[tuple[str, Path]]:
    """Heat silently uses one constraint per entry (and none of a modulo
    before 2017-02-24); both are surprises worth a warning."""
    named = [k for k in _PRECEDENCE if isinstance(entry, dict) and k in entry]
    out: list[tuple[str, Path]] = []
    if "modulo" in named and not allow_modulo:
        named.remove("modulo")
        hint = "modulo needs heat_template_version 2017-02-24 or later; Heat ignores it here"
        out.append((hint, (*path, "modulo")))
    if len(named) > 1:
        out.append((f"Heat uses only {named[0]} here and ignores {', '.join(named[1:])}", path))
    return out


def parse_constraints(
    data: Any,
    param_type: str,
    path: Path,
    source: SourceMap,
    diags: Diagnostics,
    *,
    allow_modulo: bool = True,
    fit_prefix: str = "",
) -> tuple[Constraint, ...] | None:
    """Read a ``constraints`` list; ``None`` when any entry was reported.

    ``param_type`` is the schema's type name; a constraint that cannot apply to
    it is reported as Heat words it, after ``fit_prefix`` (parameters pass
    ``"Parameter 'x' is invalid: "``, as Heat wraps that check). An unknown
    type name (already reported by the caller) skips that check.
    """
    if not isinstance(data, list):
        diags.add(source.diagnostic("Invalid constraints, expected a list", path))
        return None
    out: list[Constraint] = []
    ok = True
    for i, entry in enumerate(data):
        for message, wpath in _entry_warnings(entry, (*path, i), allow_modulo):
            diags.warning(message, wpath, source.mark(wpath))
        try:
            constraint = _one(entry, (*path, i), allow_modulo)
        except _Bad as bad:
            diags.add(source.diagnostic(str(bad), bad.path))
            ok = False
            continue
        if param_type in _KINDS and not constraint.fits_type(param_type):
            name = type(constraint).__name__
            message = f"{fit_prefix}{name} constraint invalid for {param_type}"
            diags.add(source.diagnostic(message, (*path, i)))
            ok = False
            continue
        out.append(constraint)
    return tuple(out) if ok else None


def check_all(
    constraints: Sequence[Constraint],
    value: Any,
    type_name: str | None,
    *,
    redact: bool = False,
    skip_custom: bool = False,
) -> str | None:
    """The first failure among ``constraints``, as Heat stops at the first."""
    for c in constraints:
        if skip_custom and isinstance(c, CustomConstraint):
            continue
        error = c.validate(value, type_name, redact=redact)
        if error is not None:
            return error
    return None
