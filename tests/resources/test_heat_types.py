"""The OS::Heat utility types, driven through the in-memory context.

Nothing here sleeps: waits are deadlines on a manual clock that jumps by
each ``Wait`` a poll returns.
"""

from __future__ import annotations

import asyncio
import string
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from convection.hot.functions.base import Function
from convection.resources.api import (
    InMemoryContext,
    Properties,
    ResourceFailure,
    ResourcePlugin,
    UpdateAction,
    Wait,
)
from convection.resources.heat.delay import Delay
from convection.resources.heat.none import NoneResource
from convection.resources.heat.random_string import RandomString
from convection.resources.heat.test_resource import TestResource
from convection.resources.heat.value import Value
from convection.resources.testing import ManualClock, run_action

T = TypeVar("T")
P = ("resources", "r", "properties")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def props_of(cls: type[ResourcePlugin], raw: dict[str, Any], **kw: Any) -> dict[str, Any]:
    values, diags = cls.validate(raw, P, **kw)
    assert [d for d in diags if d.is_error] == []
    return values


def errors_of(cls: type[ResourcePlugin], raw: Any, **kw: Any) -> list[tuple[Any, str]]:
    _, diags = cls.validate(raw, P, **kw)
    return [(d.path[len(P) :], d.message) for d in diags if d.is_error]


def context(clock: ManualClock | None = None, **kw: Any) -> InMemoryContext:
    ctx = InMemoryContext(resource_name="r", stack_name="s", **kw)
    if clock is not None:
        ctx.clock = clock
    return ctx


class Unresolved(Function):
    __slots__ = ()


# -- OS::Heat::None ----------------------------------------------------------------


def test_none_accepts_any_properties_and_attributes() -> None:
    values, diags = NoneResource.validate({"flavor": "m1", "networks": [{"x": 1}]}, P)
    assert diags == [] and values == {"flavor": "m1", "networks": [{"x": 1}]}
    assert NoneResource.validate("junk", P) == ({}, [])
    assert NoneResource.attribute_names() is None


def test_none_never_updates_even_where_the_real_type_would_replace() -> None:
    decision = NoneResource.decide_update({"image": "a"}, {"image": "b"})
    assert decision.action is UpdateAction.NONE


def test_none_create_makes_an_id_once() -> None:
    plugin, ctx = NoneResource(), context()
    run(plugin.create(ctx, {}))
    first = ctx.physical_id
    assert first is not None and len(first) == 36
    run(plugin.create(ctx, {}))  # a re-run after a crash keeps the id
    assert ctx.physical_id == first and ctx.writes == 1
    assert run(plugin.reference_id(ctx, {})) == first
    assert run(plugin.attribute(ctx, {}, "anything")) is None


# -- OS::Heat::Value -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_name", "value"),
    [
        ("string", 3),
        ("string", True),
        ("number", "2.5"),
        ("boolean", "TRUE"),
        ("json", {"a": [1]}),
        ("comma_delimited_list", ["a", "b"]),
        (None, {"anything": True}),
    ],
)
def test_value_is_checked_by_its_type_and_kept_as_given(type_name: str | None, value: Any) -> None:
    """Heat's Value checks ``value`` against ``type`` (``reparse``) but its
    attribute reads the frozen value with the any-typed class schema."""
    raw = {"value": value} if type_name is None else {"value": value, "type": type_name}
    assert errors_of(Value, raw) == []
    props = props_of(Value, raw)
    assert props["value"] == value and type(props["value"]) is type(value)
    assert run(Value().attribute(context(), props, "value")) == value


def test_value_type_errors_match_heat() -> None:
    assert errors_of(Value, {"value": [1], "type": "json"}) == [(("value",), '"[1]" is not a map')]
    assert errors_of(Value, {"value": "a,b", "type": "comma_delimited_list"}) == [
        (("value",), "\"'a,b'\" is not a list")
    ]
    assert errors_of(Value, {"value": 1, "type": "float"}) == [
        (
            ("type",),
            '"float" is not an allowed value [string, number, comma_delimited_list, json, boolean]',
        )
    ]
    assert errors_of(Value, {}) == [(("value",), "Property value not assigned")]


def test_value_with_unresolved_value_is_checked_later() -> None:
    fn = Unresolved("get_attr", ["x", "y"], ())
    assert props_of(Value, {"value": fn, "type": "number"})["value"] is fn


def test_value_exposes_its_value_and_updates_in_place() -> None:
    plugin, ctx = Value(), context()
    props = props_of(Value, {"value": [1, 2]})
    run(plugin.create(ctx, props))
    assert ctx.physical_id == ctx.physical_resource_name
    assert run(plugin.attribute(ctx, props, "value")) == [1, 2]
    new = props_of(Value, {"value": 3, "type": "number"})
    assert Value.decide_update(props, new).action is UpdateAction.UPDATE


# -- OS::Heat::RandomString ------------------------------------------------------------


def generate(raw: dict[str, Any]) -> str:
    plugin, ctx = RandomString(), context()
    run(plugin.create(ctx, props_of(RandomString, raw)))
    value = ctx.data["value"]
    assert isinstance(value, str)
    return value


def test_random_string_defaults_to_32_letters_and_digits() -> None:
    value = generate({})
    assert len(value) == 32
    assert set(value) <= set(string.ascii_letters + string.digits)


@pytest.mark.parametrize("attempt", range(20))
def test_random_string_honours_every_minimum(attempt: int) -> None:
    value = generate(
        {
            "length": 10,
            "character_classes": [{"class": "digits", "min": 3}, {"class": "uppercase", "min": 2}],
            "character_sequences": [{"sequence": "!@", "min": 2}],
        }
    )
    assert len(value) == 10
    assert sum(c in string.digits for c in value) >= 3
    assert sum(c in string.ascii_uppercase for c in value) >= 2
    assert sum(c in "!@" for c in value) >= 2
    assert set(value) <= set(string.digits + string.ascii_uppercase + "!@")


def test_random_string_sequences_alone_still_get_the_default_class() -> None:
    # As in Heat: character_classes has a default, so it joins the sequences.
    props = props_of(RandomString, {"character_sequences": [{"sequence": "xyz"}]})
    assert props["character_classes"] == [{"class": "lettersdigits", "min": 1}]


def test_random_string_deprecated_sequence_becomes_a_class() -> None:
    props = props_of(RandomString, {"sequence": "octdigits", "length": 40})
    assert props["character_classes"] == [{"class": "octdigits", "min": 1}]
    assert props["sequence"] is None
    assert set(generate({"sequence": "octdigits", "length": 40})) <= set(string.octdigits)
    both = props_of(
        RandomString, {"sequence": "digits", "character_classes": [{"class": "lowercase"}]}
    )
    assert both["character_classes"] == [
        {"class": "lowercase", "min": 1},
        {"class": "digits", "min": 1},
    ]


def test_random_string_validation_errors() -> None:
    too_short = {"length": 2, "character_classes": [{"class": "digits", "min": 3}]}
    assert errors_of(RandomString, too_short) == [
        (
            ("length",),
            "Length property cannot be smaller than combined character class and "
            "character sequence minimums",
        )
    ]
    assert errors_of(RandomString, {"length": 0}) == [
        (("length",), "0 is out of range (min: 1, max: 512)")
    ]
    assert errors_of(RandomString, {"character_classes": [{"class": "emoji"}]})[0][0] == (
        "character_classes",
        0,
        "class",
    )
    assert errors_of(RandomString, {"character_sequences": [{"min": 2}]}) == [
        (("character_sequences", 0, "sequence"), "Property sequence not assigned")
    ]
    assert errors_of(RandomString, {"character_sequences": [{"sequence": ""}]}) == [
        (("character_sequences", 0, "sequence"), "A character sequence must not be empty")
    ]
    assert errors_of(RandomString, {"character_classes": []}) == [
        (("character_classes",), "At least one character class or character sequence is needed")
    ]


def test_random_string_skips_the_length_rule_while_unresolved() -> None:
    fn = Unresolved("get_param", "n", ())
    raw = {"length": fn, "character_classes": [{"class": "digits", "min": 30}]}
    assert errors_of(RandomString, raw) == []


def test_random_string_is_a_secret_made_once() -> None:
    plugin, ctx = RandomString(), context()
    props = props_of(RandomString, {})
    assert run(plugin.reference_id(ctx, props)) == "r"  # not created: the name
    run(plugin.create(ctx, props))
    value = ctx.data["value"]
    run(plugin.create(ctx, props))  # re-run after a crash: same string
    assert ctx.data["value"] == value and ctx.writes == 2
    assert run(plugin.reference_id(ctx, props)) == value
    assert run(plugin.attribute(ctx, props, "value")) == value
    assert RandomString.secret_attributes == frozenset()  # Heat masks none


def test_random_string_any_change_replaces() -> None:
    old = props_of(RandomString, {"salt": "1"})
    new = props_of(RandomString, {"salt": "2"})
    assert RandomString.decide_update(old, new).action is UpdateAction.REPLACE
    assert RandomString.decide_update(old, dict(old)).action is UpdateAction.NONE


# -- OS::Heat::Delay --------------------------------------------------------------------


def test_delay_defaults_wait_for_nothing() -> None:
    plugin, ctx = Delay(), context()
    props = props_of(Delay, {})
    assert props == {
        "min_wait": 0,
        "max_jitter": 0,
        "jitter_multiplier": 1.0,
        "actions": ["CREATE"],
    }
    assert run(run_action(plugin, "create", ctx, props)) == 0
    assert ctx.writes == 0


def test_delay_records_a_deadline_and_polls_it() -> None:
    clock = ManualClock()
    plugin, ctx = Delay(), context(clock)
    props = props_of(Delay, {"min_wait": 10})
    token = run(plugin.create(ctx, props))
    assert token == clock.time + 10
    assert ctx.data["wait"] == {"operation": "op-1", "action": "CREATE", "deadline": token}
    assert run(plugin.check_create_complete(ctx, props, token)) == Wait(10.0)
    clock.advance(9.5)
    assert run(plugin.check_create_complete(ctx, props, token)) == Wait(0.5)
    clock.advance(0.5)
    assert run(plugin.check_create_complete(ctx, props, token)) is True


def test_delay_rerun_keeps_its_deadline_and_a_new_action_gets_a_new_one() -> None:
    clock = ManualClock()
    plugin, ctx = Delay(), context(clock)
    props = props_of(Delay, {"min_wait": 5, "actions": ["CREATE", "SUSPEND"]})
    first = run(plugin.create(ctx, props))
    clock.advance(3)
    assert run(plugin.create(ctx, props)) == first  # same operation: a re-run
    assert ctx.writes == 1
    ctx.operation_id = "op-2"
    assert run(plugin.suspend(ctx, props)) == clock.time + 5


def test_delay_jitter_stays_in_range() -> None:
    clock = ManualClock()
    props = props_of(Delay, {"min_wait": 1, "max_jitter": 2, "jitter_multiplier": 3})
    waits = set()
    for i in range(50):
        ctx = context(clock, operation_id=f"op-{i}")
        waits.add(run(Delay().create(ctx, props)) - clock.time)
    assert all(1 <= w <= 7 for w in waits)
    assert len(waits) > 1


@pytest.mark.parametrize("action", ["delete", "suspend", "resume"])
def test_delay_waits_only_during_listed_actions(action: str) -> None:
    clock = ManualClock()
    quiet = props_of(Delay, {"min_wait": 4})
    assert run(run_action(Delay(), action, context(clock), quiet, clock=clock)) == 0
    loud = props_of(Delay, {"min_wait": 4, "actions": [action.upper()]})
    start = clock.time
    assert run(run_action(Delay(), action, context(clock), loud, clock=clock)) == 1
    assert clock.time == start + 4


def test_delay_validation() -> None:
    assert errors_of(Delay, {"min_wait": -1}) == [
        (("min_wait",), "-1 is out of range (min: 0, max: None)")
    ]
    assert errors_of(Delay, {"actions": ["UPDATE"]})[0][0] == ("actions",)
    raw = {"min_wait": 50, "max_jitter": 10, "jitter_multiplier": 2}
    assert errors_of(Delay, raw, stack_timeout=60) == [
        ((), "OS::Heat::Delay maximum delay 70.0s exceeds stack timeout.")
    ]
    assert errors_of(Delay, raw, stack_timeout=70) == []
    assert errors_of(Delay, raw, stack_timeout=60, strict=False) == []


def test_delay_updates_in_place() -> None:
    old, new = props_of(Delay, {}), props_of(Delay, {"min_wait": 3})
    assert Delay.decide_update(old, new).action is UpdateAction.UPDATE


# -- OS::Heat::TestResource ----------------------------------------------------------------


def test_test_resource_schema_is_heats() -> None:
    schema = TestResource.properties_schema
    assert set(schema) == {
        "value",
        "update_replace",
        "update_replace_value",
        "fail",
        "client_name",
        "entity_name",
        "wait_secs",
        "action_wait_secs",
        "attr_wait_secs",
        "constraint_prop_secs",
    }
    assert [k for k, s in schema.items() if not s.update_allowed] == ["update_replace_value"]
    assert set(TestResource.attributes_schema) == {"output"}
    defaults = props_of(TestResource, {})
    assert defaults["value"] == "test_string" and defaults["wait_secs"] == 0
    assert defaults["action_wait_secs"] is None and defaults["client_name"] == ""


def test_test_resource_create_stores_value() -> None:
    plugin, ctx = TestResource(), context(ManualClock())
    props = props_of(TestResource, {"value": "hello"})
    assert run(run_action(plugin, "create", ctx, props)) == 0
    assert ctx.physical_id == ctx.physical_resource_name
    assert run(plugin.attribute(ctx, props, "output")) == "hello"
    assert run(plugin.reference_id(ctx, props)) == ctx.physical_id


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ({"wait_secs": 5}, 5),
        ({"wait_secs": 5, "action_wait_secs": {"create": 2}}, 2),
        ({"wait_secs": 5, "action_wait_secs": {"update": 2}}, 5),
        ({"wait_secs": 1, "attr_wait_secs": 3}, 4),
    ],
)
def test_test_resource_create_waits(raw: dict[str, Any], seconds: float) -> None:
    clock = ManualClock()
    start = clock.time
    props = props_of(TestResource, raw)
    assert run(run_action(TestResource(), "create", context(clock), props, clock=clock)) == 1
    assert clock.time == start + seconds


def test_test_resource_negative_wait_never_ends() -> None:
    clock = ManualClock()
    plugin, ctx = TestResource(), context(clock)
    props = props_of(TestResource, {"wait_secs": -1})
    token = run(plugin.create(ctx, props))
    clock.advance(10**6)
    assert run(plugin.check_create_complete(ctx, props, token)) is False


def test_test_resource_fail_fails_create_after_the_wait() -> None:
    clock = ManualClock()
    plugin, ctx = TestResource(), context(clock)
    props = props_of(TestResource, {"fail": True, "wait_secs": 2})
    token = run(plugin.create(ctx, props))
    assert ctx.physical_id is None and "value" not in ctx.data
    assert run(plugin.check_create_complete(ctx, props, token)) == Wait(2.0)
    clock.advance(2)
    with pytest.raises(ResourceFailure, match="Test Resource failed r"):
        run(plugin.check_create_complete(ctx, props, token))
    assert run(plugin.reference_id(ctx, props)) == "r"


def test_test_resource_rerun_of_create_is_idempotent() -> None:
    clock = ManualClock()
    plugin, ctx = TestResource(), context(clock)
    props = props_of(TestResource, {"wait_secs": 3})
    first = run(plugin.create(ctx, props))
    writes = ctx.writes
    clock.advance(1)
    assert run(plugin.create(ctx, props)) == first
    assert ctx.writes == writes


def created(raw: dict[str, Any], clock: ManualClock) -> tuple[InMemoryContext, Properties]:
    ctx = context(clock)
    props = props_of(TestResource, raw)
    run(run_action(TestResource(), "create", ctx, props, clock=clock))
    return ctx, props


def update(
    ctx: InMemoryContext, old: Properties, raw: dict[str, Any], clock: ManualClock
) -> tuple[Properties, int]:
    new = props_of(TestResource, raw)
    ctx.previous_properties, ctx.operation_id = old, "op-update"
    polls = run(run_action(TestResource(), "update", ctx, new, clock=clock))
    return new, polls


def test_test_resource_update_in_place_stores_new_value_and_waits() -> None:
    clock = ManualClock()
    ctx, old = created({"value": "a"}, clock)
    new = props_of(TestResource, {"value": "b", "action_wait_secs": {"update": 7}})
    assert TestResource.decide_update(old, new).action is UpdateAction.UPDATE
    start = clock.time
    _, polls = update(ctx, old, {"value": "b", "action_wait_secs": {"update": 7}}, clock)
    assert polls == 1 and clock.time == start + 7
    assert ctx.data["value"] == "b"


def test_test_resource_update_without_value_change_does_not_wait() -> None:
    clock = ManualClock()
    ctx, old = created({"value": "a"}, clock)
    _, polls = update(ctx, old, {"value": "a", "wait_secs": 9}, clock)
    assert polls == 0


def test_test_resource_update_to_empty_value_is_no_value_change() -> None:
    clock = ManualClock()
    ctx, old = created({"value": "a"}, clock)
    update(ctx, old, {"value": "", "wait_secs": 9}, clock)
    assert ctx.data["value"] == "a"  # Heat reads the new value from the diff


def test_test_resource_update_with_fail_keeps_old_value_and_fails() -> None:
    clock = ManualClock()
    ctx, old = created({"value": "a"}, clock)
    with pytest.raises(ResourceFailure):
        update(ctx, old, {"value": "b", "fail": True}, clock)
    assert ctx.data["value"] == "a"


@pytest.mark.parametrize(
    ("old", "new", "action"),
    [
        ({"value": "a", "update_replace": True}, {"value": "b", "update_replace": True}, "replace"),
        ({"value": "a"}, {"value": "b", "update_replace": True}, "replace"),
        ({"value": "a", "update_replace": True}, {"value": "a"}, "update"),
        ({"update_replace_value": "x"}, {"update_replace_value": "y"}, "replace"),
        ({"value": "a", "update_replace": True}, {"value": "a", "update_replace": True}, "none"),
    ],
)
def test_test_resource_replacement_knobs(
    old: dict[str, Any], new: dict[str, Any], action: str
) -> None:
    decision = TestResource.decide_update(props_of(TestResource, old), props_of(TestResource, new))
    assert decision.action.value == action


def test_test_resource_delete_waits_and_never_fails() -> None:
    clock = ManualClock()
    ctx, _ = created({}, clock)
    props = props_of(TestResource, {"fail": True, "action_wait_secs": {"delete": 3}})
    ctx.operation_id = "op-delete"
    start = clock.time
    assert run(run_action(TestResource(), "delete", ctx, props, clock=clock)) == 1
    assert clock.time == start + 3


def test_test_resource_constraint_prop_secs_is_accepted_without_waiting() -> None:
    assert props_of(TestResource, {"constraint_prop_secs": 30})["constraint_prop_secs"] == 30
    assert errors_of(TestResource, {"constraint_prop_secs": "soon"}) == [
        (("constraint_prop_secs",), "Value 'soon' is not a number")
    ]
