"""Checking and coercing property values against a schema, Heat's way.

The rules follow ``heat/engine/properties.py``:

* a name the schema does not know is ``Unknown Property <name>``;
* a required property that is absent (or null) is ``Property <name> not
  assigned``; an absent optional one takes its default, or ``None``;
* values are coerced as Heat's ``Property._get_*`` do: integers and booleans
  become strings, numeric strings become numbers, ``"true"``/``"false"`` (any
  case) become booleans; a map or list with a nested schema is checked member
  by member, with the member's path;
* constraints run on the coerced value, and the first that fails is
  reported (Heat stops at the first too).

Where we are stricter than Heat, it is to stop silent data changes: Heat's
``int(3.7)`` quietly makes 3 and ``int(True)`` makes 1; here a non-integral
number or a boolean is not an integer (nor a number), and NaN or infinity is
not a number (it could not be stored as JSON).

Values may still hold unresolved :class:`Function` nodes (``get_attr`` of a
resource not yet created). Their values cannot be checked yet, so they are
kept as they are and only names and required-ness are checked; Heat likewise
skips values it cannot resolve at validate time. The engine validates again,
strictly, once everything is resolved.

``strict=False`` is Heat's template-validate (``strict_validate`` off):
``Properties.validate(with_value=False)`` in heat/engine/properties.py
reads only the section's own keys, so an unknown top-level name is an
error there too, while values, required-ness and the names inside nested
maps are first read at create. Here those are warnings, and errors when
strict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from convection.common import JSON, Diagnostic, Path, Severity, suggest
from convection.hot import Constraint, Function, check_all, has_functions, to_data
from convection.resources._types import PropertyType

Coerced = tuple[bool, Any]
_FAIL: Coerced = (False, None)


class ValueSchema(Protocol):
    """What checking a value reads of its schema (``_schema.PropertySchema``,
    which checks its own default with :func:`validate_value`)."""

    @property
    def type(self) -> PropertyType: ...
    @property
    def default(self) -> JSON: ...
    @property
    def required(self) -> bool: ...
    @property
    def constraints(self) -> tuple[Constraint, ...]: ...
    @property
    def heat_type(self) -> str: ...
    @property
    def members(self) -> Mapping[str, ValueSchema] | None: ...
    @property
    def item(self) -> ValueSchema | None: ...


_ZERO: dict[PropertyType, JSON] = {
    PropertyType.STRING: "",
    PropertyType.INTEGER: 0,
    PropertyType.NUMBER: 0,
    PropertyType.BOOLEAN: False,
    PropertyType.MAP: {},
    PropertyType.LIST: [],
    PropertyType.ANY: None,
}


def validate_properties(
    schema: Mapping[str, ValueSchema],
    values: Any,
    path: Path,
    *,
    strict: bool = True,
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Check ``values`` (a resource's ``properties`` section) against ``schema``.

    Returns the coerced values, with every schema name present (``None`` when
    absent without a default), and every problem found, each located by its
    full path (``path`` is where the properties section itself lives).
    A whole section that is a single unresolved function cannot be checked:
    the result is then empty, and the engine checks again after resolving it.
    """
    if isinstance(values, Function):
        return {}, []
    checker = _Checker(strict)
    if values is None:
        values = {}
    if not isinstance(values, Mapping):
        checker.value_problem(_type_message(PropertyType.MAP, values), path)
        return {}, checker.diags
    return checker.members(schema, values, path, top=True), checker.diags


def validate_value(
    schema: ValueSchema,
    value: Any,
    path: Path,
    *,
    strict: bool = True,
    skip_custom: bool = False,
) -> tuple[Any, list[Diagnostic]]:
    """Check and coerce one value; ``None`` stands for the type's empty value."""
    checker = _Checker(strict, skip_custom=skip_custom)
    return checker.item(schema, value, path), checker.diags


class _Checker:
    """Walks values against a schema, collecting diagnostics as it goes."""

    __slots__ = ("diags", "skip_custom", "strict")

    def __init__(self, strict: bool, *, skip_custom: bool = False) -> None:
        self.strict = strict
        self.skip_custom = skip_custom
        self.diags: list[Diagnostic] = []

    def name_problem(self, message: str, path: Path) -> None:
        self.diags.append(Diagnostic(message, path))

    def value_problem(self, message: str, path: Path) -> None:
        severity = Severity.ERROR if self.strict else Severity.WARNING
        self.diags.append(Diagnostic(message, path, severity=severity))

    def members(
        self,
        schema: Mapping[str, ValueSchema],
        values: Mapping[str, Any],
        path: Path,
        *,
        top: bool = False,
    ) -> dict[str, Any]:
        """A map's members; an unknown name is always an error at the ``top``
        (the properties section), and a value problem inside a nested map,
        which Heat's template-validate never reads."""
        unknown = self.name_problem if top else self.value_problem
        for key in values:
            if key not in schema:
                unknown(f"Unknown Property {key}{suggest(key, schema)}", (*path, key))
        out: dict[str, Any] = {}
        for name, prop in schema.items():
            raw = values.get(name)
            where = (*path, name)
            if raw is not None:
                out[name] = self.value(prop, raw, where)
            elif prop.default is not None:
                out[name] = self.value(prop, prop.default, where)
            else:
                if prop.required:  # Heat checks this only with values (strict)
                    self.value_problem(f"Property {name} not assigned", where)
                out[name] = None
        return out

    def item(self, schema: ValueSchema, raw: Any, path: Path) -> Any:
        """A list item (or lone value): null means the default, else the empty value."""
        if raw is None:
            raw = schema.default if schema.default is not None else _ZERO[schema.type]
            if raw is None:
                return None
        return self.value(schema, raw, path)

    def value(self, schema: ValueSchema, raw: Any, path: Path) -> Any:
        if isinstance(raw, Function):
            return raw
        coerce = _COERCE.get(schema.type)
        if coerce is None:
            ok, coerced = self.nested(schema, raw, path)
        else:
            ok, coerced = coerce(raw)
        if not ok:
            self.value_problem(_type_message(schema.type, raw), path)
            return raw
        if schema.constraints and not has_functions(coerced):
            problem = check_all(
                schema.constraints, coerced, schema.heat_type, skip_custom=self.skip_custom
            )
            if problem is not None:
                self.value_problem(problem, path)
        return coerced

    def nested(self, schema: ValueSchema, raw: Any, path: Path) -> Coerced:
        if schema.type is PropertyType.MAP:
            if not isinstance(raw, Mapping):
                return _FAIL
            if schema.members is None:
                return True, dict(raw)
            return True, self.members(schema.members, raw, path)
        if schema.type is PropertyType.LIST:
            if not isinstance(raw, list | tuple):
                return _FAIL
            if schema.item is None:
                return True, list(raw)
            item = schema.item
            return True, [self.item(item, v, (*path, i)) for i, v in enumerate(raw)]
        return True, raw  # ANY


def _to_string(raw: Any) -> Coerced:
    if isinstance(raw, str):
        return True, raw
    if isinstance(raw, bool | int):
        # Heat's rule: str(True) is "True", as Python spells it.
        return True, str(raw)
    return _FAIL


def _to_integer(raw: Any) -> Coerced:
    if isinstance(raw, bool):
        return _FAIL
    if isinstance(raw, int):
        return True, raw
    if isinstance(raw, float):
        return (True, int(raw)) if raw.is_integer() else _FAIL
    if isinstance(raw, str):
        try:
            return True, int(raw)
        except ValueError:
            return _FAIL
    return _FAIL


def _to_number(raw: Any) -> Coerced:
    if isinstance(raw, bool):
        return _FAIL
    if isinstance(raw, int):
        return True, raw
    if isinstance(raw, float):
        return (True, raw) if math.isfinite(raw) else _FAIL
    if isinstance(raw, str):
        try:
            return True, int(raw)
        except ValueError:
            pass
        try:
            number = float(raw)
        except ValueError:
            return _FAIL
        return (True, number) if math.isfinite(number) else _FAIL
    return _FAIL


def _to_boolean(raw: Any) -> Coerced:
    if isinstance(raw, bool):
        return True, raw
    if isinstance(raw, str) and raw.lower() in ("true", "false"):
        return True, raw.lower() == "true"
    return _FAIL


_COERCE: dict[PropertyType, Callable[[Any], Coerced]] = {
    PropertyType.STRING: _to_string,
    PropertyType.INTEGER: _to_integer,
    PropertyType.NUMBER: _to_number,
    PropertyType.BOOLEAN: _to_boolean,
}


def _type_message(kind: PropertyType, raw: Any) -> str:
    """Heat's wording for each type mismatch. Functions nested in the value
    are shown as the user wrote them, not as parsed nodes."""
    raw = to_data(raw)
    if kind is PropertyType.STRING:
        return f"Value must be a string; got {raw!r}"
    if kind is PropertyType.INTEGER:
        return f"Value '{raw}' is not an integer"
    if kind is PropertyType.NUMBER:
        return f"Value '{raw}' is not a number"
    if kind is PropertyType.BOOLEAN:
        return f'"{raw}" is not a valid boolean'
    if kind is PropertyType.MAP:
        return f'"{raw}" is not a map'
    return f'"{raw!r}" is not a list'
