"""Property schemas, validation and coercion, and the update rule."""

from __future__ import annotations

from typing import Any

import pytest

from convection.common.diagnostics import Severity
from convection.hot.constraints import (
    AllowedPattern,
    AllowedValues,
    CustomConstraint,
    Length,
    Range,
)
from convection.hot.functions.base import Function
from convection.resources.api import (
    AttributeSchema,
    AttributeType,
    InMemoryContext,
    PropertySchema,
    PropertyType,
    ResourcePlugin,
    SchemaError,
    UpdateAction,
    Wait,
    changed_properties,
    needs_replace,
    schema_to_api,
    validate_properties,
    validate_value,
)

STR, INT, NUM, BOOL, MAP, LIST, ANY = (
    PropertyType.STRING,
    PropertyType.INTEGER,
    PropertyType.NUMBER,
    PropertyType.BOOLEAN,
    PropertyType.MAP,
    PropertyType.LIST,
    PropertyType.ANY,
)
BASE = ("resources", "web", "properties")


def coerce(kind: PropertyType, value: Any) -> tuple[Any, list[str]]:
    out, diags = validate_value(PropertySchema(type=kind), value, ("p",))
    return out, [d.message for d in diags]


class Unresolved(Function):
    """A stand-in for get_attr of a resource that does not exist yet."""

    __slots__ = ()


def unresolved() -> Unresolved:
    return Unresolved("get_attr", ["other", "x"], ("get_attr",))


# -- coercion, one type at a time ---------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("abc", "abc"), (3, "3"), (True, "True"), (False, "False"), ("", "")],
)
def test_string_accepts_text_integers_and_booleans(value: Any, expected: str) -> None:
    assert coerce(STR, value) == (expected, [])


@pytest.mark.parametrize("value", [1.5, [1], {"a": 1}])
def test_string_rejects_floats_lists_and_maps(value: Any) -> None:
    _, errors = coerce(STR, value)
    assert errors == [f"Value must be a string; got {value!r}"]


@pytest.mark.parametrize(
    ("value", "expected"), [(3, 3), ("3", 3), (" 7 ", 7), ("-2", -2), (4.0, 4)]
)
def test_integer_coercion(value: Any, expected: int) -> None:
    out, errors = coerce(INT, value)
    assert (out, errors) == (expected, [])
    assert type(out) is int


@pytest.mark.parametrize("value", ["3.5", 3.5, "abc", True, [3]])
def test_integer_rejections(value: Any) -> None:
    _, errors = coerce(INT, value)
    assert errors == [f"Value '{value}' is not an integer"]


@pytest.mark.parametrize(
    ("value", "expected"), [(3, 3), (2.5, 2.5), ("3", 3), ("2.5", 2.5), ("1e3", 1000.0)]
)
def test_number_coercion(value: Any, expected: float) -> None:
    assert coerce(NUM, value) == (expected, [])


@pytest.mark.parametrize("value", ["abc", True, "nan", float("inf"), {"a": 1}])
def test_number_rejections(value: Any) -> None:
    _, errors = coerce(NUM, value)
    assert errors == [f"Value '{value}' is not a number"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (False, False), ("true", True), ("FALSE", False), ("True", True)],
)
def test_boolean_coercion(value: Any, expected: bool) -> None:
    assert coerce(BOOL, value) == (expected, [])


@pytest.mark.parametrize("value", ["yes", 1, 0, "1"])
def test_boolean_rejects_what_heat_rejects(value: Any) -> None:
    _, errors = coerce(BOOL, value)
    assert errors == [f'"{value}" is not a valid boolean']


def test_map_and_list_shapes() -> None:
    assert coerce(MAP, {"a": 1}) == ({"a": 1}, [])
    assert coerce(MAP, [1])[1] == ['"[1]" is not a map']
    assert coerce(LIST, [1, "a"]) == ([1, "a"], [])
    assert coerce(LIST, ("x",)) == (["x"], [])
    assert coerce(LIST, "abc")[1] == ["\"'abc'\" is not a list"]
    assert coerce(LIST, {"a": 1})[1] == ["\"{'a': 1}\" is not a list"]


def test_any_takes_anything_unchanged() -> None:
    for value in ("s", 1, [1], {"a": [None]}, True):
        assert coerce(ANY, value) == (value, [])


def test_null_lone_value_becomes_the_empty_value_or_default() -> None:
    assert coerce(STR, None) == ("", [])
    assert coerce(INT, None) == (0, [])
    assert coerce(LIST, None) == ([], [])
    assert coerce(ANY, None) == (None, [])
    out, _ = validate_value(PropertySchema(type=STR, default="d"), None, ())
    assert out == "d"


# -- whole property sections -------------------------------------------------

SCHEMA = {
    "name": PropertySchema(type=STR, required=True),
    "size": PropertySchema(type=INT, default=1, constraints=(Range(min=1, max=10),)),
    "flag": PropertySchema(type=BOOL),
    "tags": PropertySchema(type=MAP),
}


def test_defaults_apply_and_every_name_is_present() -> None:
    values, diags = validate_properties(SCHEMA, {"name": "web"}, BASE)
    assert diags == []
    assert values == {"name": "web", "size": 1, "flag": None, "tags": None}


def test_unknown_property_is_reported_at_its_path() -> None:
    _, diags = validate_properties(SCHEMA, {"name": "a", "colour": "red"}, BASE)
    assert [(d.message, d.path) for d in diags] == [("Unknown Property colour", (*BASE, "colour"))]


def test_missing_required_property() -> None:
    _, diags = validate_properties(SCHEMA, {}, BASE)
    assert [(d.message, d.path) for d in diags] == [("Property name not assigned", (*BASE, "name"))]


def test_null_counts_as_absent() -> None:
    values, diags = validate_properties(SCHEMA, {"name": None, "size": None}, BASE)
    assert [d.message for d in diags] == ["Property name not assigned"]
    assert values["size"] == 1


def test_constraint_failure_carries_heats_message() -> None:
    _, diags = validate_properties(SCHEMA, {"name": "a", "size": "11"}, BASE)
    assert [(d.message, d.path) for d in diags] == [
        ("11 is out of range (min: 1, max: 10)", (*BASE, "size"))
    ]


def test_type_error_is_located_and_raw_value_kept() -> None:
    values, diags = validate_properties(SCHEMA, {"name": "a", "flag": "maybe"}, BASE)
    assert [(d.message, d.path) for d in diags] == [
        ('"maybe" is not a valid boolean', (*BASE, "flag"))
    ]
    assert values["flag"] == "maybe"


def test_all_problems_are_reported_at_once() -> None:
    _, diags = validate_properties(SCHEMA, {"x": 1, "size": 0, "flag": 3}, BASE)
    assert sorted(d.message for d in diags) == [
        '"3" is not a valid boolean',
        "0 is out of range (min: 1, max: 10)",
        "Property name not assigned",
        "Unknown Property x",
    ]


def test_properties_section_must_be_a_map() -> None:
    values, diags = validate_properties(SCHEMA, ["a"], BASE)
    assert values == {}
    assert [(d.message, d.path) for d in diags] == [("\"['a']\" is not a map", BASE)]


def test_missing_section_is_an_empty_one() -> None:
    _, diags = validate_properties(SCHEMA, None, BASE)
    assert [d.message for d in diags] == ["Property name not assigned"]


def test_not_strict_downgrades_value_problems_only() -> None:
    # Heat's template-validate (strict_validate off) checks property names
    # only; a missing required property is a value problem, found at create.
    _, diags = validate_properties(SCHEMA, {"size": "big", "nope": 1}, BASE, strict=False)
    by_message = {d.message: d.severity for d in diags}
    assert by_message == {
        "Value 'big' is not an integer": Severity.WARNING,
        "Unknown Property nope": Severity.ERROR,
        "Property name not assigned": Severity.WARNING,
    }


# -- nested schemas -------------------------------------------------------------

PORT = PropertySchema(
    type=MAP,
    schema={
        "port": PropertySchema(type=STR, required=True),
        "fixed_ip": PropertySchema(type=STR, constraints=(AllowedPattern(r"[0-9.]+"),)),
        "mtu": PropertySchema(type=INT, default=1500),
    },
)
NETWORKS = {"networks": PropertySchema(type=LIST, schema=PORT)}


def test_list_of_maps_applies_nested_defaults() -> None:
    values, diags = validate_properties(NETWORKS, {"networks": [{"port": "p1"}]}, BASE)
    assert diags == []
    assert values == {"networks": [{"port": "p1", "fixed_ip": None, "mtu": 1500}]}


def test_nested_errors_carry_the_full_path() -> None:
    raw = {"networks": [{"port": "p1"}, {"fixed_ip": "x", "mtu": "a", "typo": 1}]}
    _, diags = validate_properties(NETWORKS, raw, BASE)
    found = sorted((d.path, d.message) for d in diags)
    item = (*BASE, "networks", 1)
    assert found == sorted(
        [
            ((*item, "typo"), "Unknown Property typo"),
            ((*item, "port"), "Property port not assigned"),
            ((*item, "fixed_ip"), '"x" does not match pattern "[0-9.]+"'),
            ((*item, "mtu"), "Value 'a' is not an integer"),
        ]
    )


def test_null_list_item_takes_the_item_schema_empty_value() -> None:
    # Heat hands a null item to the item schema as "no value": an empty map
    # here, which then lacks its required member.
    _, diags = validate_properties(NETWORKS, {"networks": [None]}, BASE)
    assert [(d.path, d.message) for d in diags] == [
        ((*BASE, "networks", 0, "port"), "Property port not assigned")
    ]


def test_list_item_type_errors_name_the_index() -> None:
    schema = {"ports": PropertySchema(type=LIST, schema=PropertySchema(type=INT))}
    values, diags = validate_properties(schema, {"ports": [80, "443", "x"]}, BASE)
    assert values["ports"] == [80, 443, "x"]
    assert [(d.path, d.message) for d in diags] == [
        ((*BASE, "ports", 2), "Value 'x' is not an integer")
    ]


def test_map_without_schema_keeps_members() -> None:
    values, _ = validate_properties({"m": PropertySchema(type=MAP)}, {"m": {"k": [1]}}, BASE)
    assert values == {"m": {"k": [1]}}


def test_absent_map_with_schema_and_no_default_is_none() -> None:
    values, diags = validate_properties({"m": PORT}, {}, BASE)
    assert (values, diags) == ({"m": None}, [])


def test_length_and_allowed_values_on_lists() -> None:
    schema = {
        "l": PropertySchema(type=LIST, constraints=(Length(min=1), AllowedValues(("a", "b"))))
    }
    assert validate_properties(schema, {"l": ["a", "b"]}, ())[1] == []
    assert [d.message for d in validate_properties(schema, {"l": []}, ())[1]] == [
        "length (0) is out of range (min: 1, max: None)"
    ]
    assert [d.message for d in validate_properties(schema, {"l": ["c"]}, ())[1]] == [
        "\"['c']\" is not an allowed value [a, b]"
    ]


# -- unresolved functions ---------------------------------------------------------


def test_function_values_skip_value_checks_but_not_names() -> None:
    fn = unresolved()
    raw = {"name": fn, "size": fn, "flag": fn, "bogus": fn}
    values, diags = validate_properties(SCHEMA, raw, BASE)
    assert [d.message for d in diags] == ["Unknown Property bogus"]
    assert values["size"] is fn


def test_function_inside_nested_values_is_kept() -> None:
    fn = unresolved()
    values, diags = validate_properties(
        NETWORKS, {"networks": [{"port": fn, "mtu": "9000"}, fn]}, BASE
    )
    assert diags == []
    assert values["networks"][0]["port"] is fn
    assert values["networks"][0]["mtu"] == 9000
    assert values["networks"][1] is fn


def test_function_still_cannot_satisfy_a_missing_required_name() -> None:
    _, diags = validate_properties(NETWORKS, {"networks": [{"mtu": unresolved()}]}, BASE)
    assert [d.message for d in diags] == ["Property port not assigned"]


def test_constraints_skip_values_holding_functions() -> None:
    schema = {"l": PropertySchema(type=LIST, constraints=(Length(max=1),))}
    assert validate_properties(schema, {"l": [1, unresolved()]}, ())[1] == []


def test_whole_section_as_a_function_cannot_be_checked_yet() -> None:
    assert validate_properties(SCHEMA, unresolved(), BASE) == ({}, [])


# -- schema declarations --------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": STR, "update_allowed": True, "immutable": True}, "cannot both be true"),
        ({"type": STR, "schema": {}}, "schema valid only for list or map"),
        ({"type": LIST, "schema": {"a": PropertySchema(type=STR)}}, "schema of its items"),
        ({"type": MAP, "schema": PropertySchema(type=STR)}, "mapping of member schemas"),
        ({"type": STR, "constraints": (Range(min=1),)}, "Range constraint invalid for string"),
        ({"type": INT, "constraints": (Length(min=1),)}, "Length constraint invalid"),
        ({"type": INT, "default": "x"}, "invalid default 'x'"),
        ({"type": INT, "default": 0, "constraints": (Range(min=1),)}, "invalid default 0"),
        ({"type": "string"}, "invalid property type"),
    ],
)
def test_impossible_schemas_fail_when_declared(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        PropertySchema(**kwargs)


def test_defaults_skip_custom_constraints() -> None:
    PropertySchema(type=STR, default="x", constraints=(CustomConstraint("nova.flavor"),))


def test_custom_constraints_run_on_values() -> None:
    schema = {"ip": PropertySchema(type=STR, constraints=(CustomConstraint("ip_addr"),))}
    assert validate_properties(schema, {"ip": "10.0.0.1"}, ())[1] == []
    assert [d.message for d in validate_properties(schema, {"ip": "x"}, ())[1]] == [
        "Error validating value 'x': Invalid IP address"
    ]


def test_map_schema_is_frozen() -> None:
    members = {"a": PropertySchema(type=STR)}
    schema = PropertySchema(type=MAP, schema=members)
    members["b"] = PropertySchema(type=STR)
    assert schema.members is not None
    assert list(schema.members) == ["a"]
    with pytest.raises(TypeError):
        schema.members["c"] = PropertySchema(type=STR)  # type: ignore[index]


def test_to_api_renders_heats_shape() -> None:
    schema = {
        "ports": PropertySchema(
            type=LIST,
            description="Ports.",
            schema=PropertySchema(type=INT, constraints=(Range(min=1, max=65535),)),
            update_allowed=True,
        ),
        "secret": PropertySchema(type=STR, hidden=True),
    }
    assert schema_to_api(schema) == {
        "ports": {
            "type": "list",
            "description": "Ports.",
            "required": False,
            "update_allowed": True,
            "immutable": False,
            "schema": {
                "*": {
                    "type": "integer",
                    "required": False,
                    "update_allowed": False,
                    "immutable": False,
                    "constraints": [{"range": {"min": 1, "max": 65535}}],
                }
            },
        }
    }
    assert AttributeSchema("An IP.", AttributeType.STRING).to_api() == {
        "description": "An IP.",
        "type": "string",
    }


# -- update decisions -------------------------------------------------------------------

UPDATE_SCHEMA = {
    "name": PropertySchema(type=STR, update_allowed=True),
    "size": PropertySchema(type=INT, update_allowed=True),
    "image": PropertySchema(type=STR),
    "zone": PropertySchema(type=STR, immutable=True),
}
OLD = {"name": "a", "size": 1, "image": "i1", "zone": "z1"}


def test_no_change() -> None:
    assert needs_replace(UPDATE_SCHEMA, OLD, dict(OLD)).action is UpdateAction.NONE


def test_update_allowed_changes_update_in_place() -> None:
    action, reason = needs_replace(UPDATE_SCHEMA, OLD, {**OLD, "name": "b", "size": 2})
    assert action is UpdateAction.UPDATE
    assert reason == "properties name, size are updated in place"


def test_any_other_change_replaces() -> None:
    action, reason = needs_replace(UPDATE_SCHEMA, OLD, {**OLD, "name": "b", "image": "i2"})
    assert action is UpdateAction.REPLACE
    assert reason == "property image cannot be updated in place"


def test_immutable_change_is_an_error_even_with_others() -> None:
    new = {**OLD, "image": "i2", "zone": "z2"}
    action, reason = needs_replace(UPDATE_SCHEMA, OLD, new)
    assert action is UpdateAction.ERROR
    assert reason == "property zone is immutable and cannot be changed"


def test_unknown_names_replace_and_functions_count_as_changed() -> None:
    assert needs_replace(UPDATE_SCHEMA, OLD, {**OLD, "extra": 1}).action is UpdateAction.REPLACE
    fn = unresolved()
    assert changed_properties({"name": fn}, {"name": fn}) == ("name",)
    assert needs_replace(UPDATE_SCHEMA, OLD, {**OLD, "size": fn}).action is UpdateAction.UPDATE


# -- the plugin base ---------------------------------------------------------------------


class Minimal(ResourcePlugin):
    type_name = "Test::Minimal"
    properties_schema = {"a": PropertySchema(type=STR, update_allowed=True)}  # noqa: RUF012

    async def create(self, ctx: Any, props: Any) -> None:
        await ctx.set_physical_id("phys-1")


def test_base_defaults_are_heats() -> None:
    import asyncio

    plugin = Minimal()
    ctx = InMemoryContext(resource_name="m")

    async def run() -> None:
        assert await plugin.reference_id(ctx, {}) == "m"
        await plugin.create(ctx, {})
        assert await plugin.check_create_complete(ctx, {}, None) is True
        assert await plugin.reference_id(ctx, {}) == "phys-1"
        assert await plugin.attribute(ctx, {}, "anything") is None

    asyncio.run(run())
    assert Minimal.attribute_names() == frozenset({"show"})
    assert Minimal.decide_update({"a": "x"}, {"a": "y"}).action is UpdateAction.UPDATE


def test_plugin_declarations_are_checked_and_frozen() -> None:
    with pytest.raises(TypeError, match="not a PropertySchema"):

        class Bad(ResourcePlugin):
            type_name = "Test::Bad"
            properties_schema = {"a": {"type": "string"}}  # type: ignore[dict-item]  # noqa: RUF012

    with pytest.raises(TypeError, match="secret attributes"):

        class Leaky(ResourcePlugin):
            type_name = "Test::Leaky"
            secret_attributes = frozenset({"password"})

    frozen: Any = Minimal.properties_schema
    with pytest.raises(TypeError):
        frozen["b"] = PropertySchema(type=STR)


def test_wait_is_falsy_so_done_checks_read_naturally() -> None:
    assert not Wait(3.0)
    assert Wait(3.0).seconds == 3.0


def test_type_errors_show_functions_as_written() -> None:
    schema = {"name": PropertySchema(type=STR)}
    _, diags = validate_properties(schema, {"name": {"a": unresolved()}}, BASE)
    assert [d.message for d in diags] == [
        "Value must be a string; got {'a': {'get_attr': ['other', 'x']}}"
    ]
