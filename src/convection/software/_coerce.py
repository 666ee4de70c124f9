"""Coercion of a software-config input's ``default`` to its declared ``type``.

Heat validates an input's default against the input's type when the config
is loaded (``software_config_io.InputConfig``): the default is checked as a
property of the parameter type's property kind, and the *converted* value is
what later appears in the derived config. So a ``Number`` input with
``default: "5"`` is deployed as ``5``, and ``default: "abc"`` is an error.
One legacy path is kept: a default of ``""`` with a non-String type passes
unchecked, because defaults used to be strings.

Only defaults are coerced. Heat passes ``input_values`` through as given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from convection.common import JSON
from convection.software.errors import InvalidConfig

INPUT_TYPES: Final = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")

_TRUE: Final = frozenset({"1", "t", "true", "on", "y", "yes"})
_FALSE: Final = frozenset({"0", "f", "false", "off", "n", "no"})


def coerce_default(name: str, type_: str, default: JSON) -> JSON:
    """Return ``default`` converted to ``type_``, or raise :class:`InvalidConfig`."""
    if default is None:
        return None
    if default == "" and type_ != "String":
        return default
    field = f"inputs.{name}.default"
    try:
        return _CONVERT[type_](default)
    except KeyError:
        raise InvalidConfig(f"unknown type {type_!r}", field=f"inputs.{name}.type") from None
    except (TypeError, ValueError) as exc:
        raise InvalidConfig(str(exc), field=field) from None


def _string(value: JSON) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    raise TypeError(f"value must be a string, got {type(value).__name__}")


def _number(value: JSON) -> int | float:
    if isinstance(value, bool):
        raise TypeError("value must be a number, got a boolean")
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return float(value)
    raise TypeError(f"value must be a number, got {type(value).__name__}")


def _comma_list(value: JSON) -> list[str]:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",")] if value else []
    if isinstance(value, list):
        return [_string(item) for item in value]
    raise TypeError(f"value must be a list or a comma-delimited string, got {type(value).__name__}")


def _json(value: JSON) -> JSON:
    if isinstance(value, str):
        value = json.loads(value)
    if isinstance(value, Mapping | list):
        return value
    raise TypeError(f"value must be a map or a list, got {type(value).__name__}")


def _boolean(value: JSON) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"value {value!r} is not a boolean")


_CONVERT: Final = {
    "String": _string,
    "Number": _number,
    "CommaDelimitedList": _comma_list,
    "Json": _json,
    "Boolean": _boolean,
}
