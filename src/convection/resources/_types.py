"""Heat's property types: the vocabulary that schemas and value validation share.

Apart from ``_schema`` so that ``_validate`` can check values without
importing the schema classes that use it to check their own defaults.
"""

from __future__ import annotations

import enum


class PropertyType(enum.StrEnum):
    """Heat's property data types, spelled as Heat's API shows them."""

    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    MAP = "map"
    LIST = "list"
    #: No coercion at all: OS::Heat::Value's ``value`` before its ``type`` is known.
    ANY = "any"


#: Heat's property type names, which the constraints module speaks.
HEAT_TYPE_NAMES: dict[PropertyType, str] = {
    PropertyType.STRING: "String",
    PropertyType.INTEGER: "Integer",
    PropertyType.NUMBER: "Number",
    PropertyType.BOOLEAN: "Boolean",
    PropertyType.MAP: "Map",
    PropertyType.LIST: "List",
    PropertyType.ANY: "Any",
}
