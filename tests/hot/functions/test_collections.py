"""repeat, map_merge, map_replace, filter, list_concat and list_concat_unique."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest

from convection.common.limits import DEFAULT_LIMITS, Limits
from convection.hot.functions.base import limits_of, measure
from convection.hot.functions.tables import versions_having

if TYPE_CHECKING:
    from conftest import Hot

REPEAT = versions_having("repeat")
REPEAT_LISTS_ONLY = [v for v in REPEAT if v < "2016-10-14"]
REPEAT_MAPS = [v for v in REPEAT if v >= "2016-10-14"]
PERMUTATIONS = [v for v in REPEAT if v >= "2017-09-01"]
#: Where the harness's located helpers parse a snippet (its ``AT``).
AT = ("resources", "r", "properties", "value")
NO_PERMUTATIONS = [v for v in REPEAT if v < "2017-09-01"]


def repeat(template: object, for_each: object, **extra: object) -> dict[str, object]:
    return {"repeat": {"template": template, "for_each": for_each, **extra}}


# -- repeat -----------------------------------------------------------------


@pytest.mark.parametrize("version", REPEAT)
def test_repeat(hot: Hot, version: str) -> None:
    snippet = repeat({"port": "%p%", "proto": "tcp"}, {"%p%": ["80", "443"]})
    assert hot.evaluate(snippet, version) == [
        {"port": "80", "proto": "tcp"},
        {"port": "443", "proto": "tcp"},
    ]
    nested = repeat("%a%-%b%", {"%a%": ["1", "2"], "%b%": ["x", "y"]})
    assert hot.evaluate(nested, version) == ["1-x", "1-y", "2-x", "2-y"]
    # keys are substituted too, and a None list means no items
    assert hot.evaluate(repeat({"k%a%": "%a%"}, {"%a%": ["1"]}), version) == [{"k1": "1"}]
    assert hot.evaluate(repeat("%a%", {"%a%": None}), version) == []


@pytest.mark.parametrize("version", REPEAT)
def test_repeat_replaces_each_variable_in_turn(hot: Hot, version: str) -> None:
    # the second variable matches text the first value brought in, as in Heat
    snippet = repeat("<%a%>", {"%a%": ["%b%"], "%b%": ["B"]})
    assert hot.evaluate(snippet, version) == ["<B>"]


#: Heat's text for a repeat without its keys: a KeyError's, so quoted and
#: with its newlines and quotes escaped (heat/engine/hot/functions.py Repeat).
REPEAT_SYNTAX = (
    '\'"repeat" syntax should be repeat:\\n'
    "              template: This is %var%\\n"
    "              for_each:\\n"
    "                %var%: [\\'a\\', \\'b\\', \\'c\\']'"
)


@pytest.mark.parametrize("version", REPEAT)
def test_repeat_errors(hot: Hot, version: str) -> None:
    assert hot.parse_error({"repeat": ["x"]}, version) == 'Arguments to "repeat" must be a map'
    assert hot.validate(repeat("x", ["a"]), version) == [
        'The "for_each" argument to "repeat" must contain a map'
    ]
    assert hot.error(repeat("%a%", {"%a%": "abc"}), version).startswith(
        'The values of the "for_each" argument to "repeat" must be lists'
    )


@pytest.mark.parametrize("version", REPEAT)
@pytest.mark.parametrize("args", [{"template": "x"}, {"for_each": {"%a%": ["x"]}}, {}])
def test_repeat_syntax_is_heats_key_error_text(hot: Hot, version: str, args: object) -> None:
    assert hot.parse_error_at({"repeat": args}, version) == (REPEAT_SYNTAX, AT)


def test_repeat_syntax_text_is_what_str_of_heats_key_error_gives() -> None:
    example = "repeat:\n              template: This is %var%\n              for_each:\n"
    example += "                %var%: ['a', 'b', 'c']"
    assert str(KeyError(f'"repeat" syntax should be {example}')) == REPEAT_SYNTAX


@pytest.mark.parametrize("version", REPEAT)
@pytest.mark.parametrize(
    ("for_each", "message"),
    [
        ({"%a%": [1]}, "replace() argument 2 must be str, not int"),
        ({"%a%": ["x", None]}, "replace() argument 2 must be str, not None"),
        ({"%a%": [{"k": "v"}]}, "replace() argument 2 must be str, not dict"),
        ({"%a%": [True]}, "replace() argument 2 must be str, not bool"),
        ({1: ["x"]}, "replace() argument 1 must be str, not int"),
        ({"%a%": ["x"], "%b%": [1.5]}, "replace() argument 2 must be str, not float"),
    ],
)
def test_repeat_substitutes_with_pythons_str_replace(
    hot: Hot, version: str, for_each: object, message: str
) -> None:
    """Heat calls ``str.replace`` per variable on every string of the
    template, so a non-string fails there in Python's words, even where the
    variable does not occur."""
    assert hot.error_at(repeat("no variable here", for_each), version) == (message, AT)


@pytest.mark.parametrize("version", REPEAT)
def test_repeat_keeps_what_is_not_a_string(hot: Hot, version: str) -> None:
    """Numbers, booleans and nulls in the template are kept, and a template
    without strings never meets the values, so they need not be strings."""
    template = {"n": 1, "b": True, "z": None, "s": "%a%", "l": [2, "%a%"]}
    assert hot.evaluate(repeat(template, {"%a%": ["x"]}), version) == [
        {"n": 1, "b": True, "z": None, "s": "x", "l": [2, "x"]}
    ]
    assert hot.evaluate(repeat([1, 2], {"%a%": [3, 4]}), version) == [[1, 2], [1, 2]]
    assert hot.evaluate(repeat(7, {"%a%": [None]}), version) == [7]
    # an empty variable is replaced as str.replace replaces it: everywhere
    assert hot.evaluate(repeat("ab", {"": ["-"]}), version) == ["-a-b-"]


@pytest.mark.parametrize("version", REPEAT)
def test_repeat_with_a_computed_for_each_fails_as_heat_unpacks_it(hot: Hot, version: str) -> None:
    snippet = repeat("x", {"get_param": "loop"})
    assert hot.error_at(snippet, version, parameters={"loop": ["a"]}) == (
        "'list' object has no attribute 'items'",
        AT,
    )
    assert hot.error_at(snippet, version, parameters={"loop": {}}) == (
        "not enough values to unpack (expected 2, got 0)",
        AT,
    )
    assert hot.evaluate(snippet, version, parameters={"loop": {"%v%": ["1"]}}) == ["x"]


@pytest.mark.parametrize("version", REPEAT_LISTS_ONLY)
def test_repeat_over_a_map_needs_2016_10_14(hot: Hot, version: str) -> None:
    assert hot.error(repeat("%k%", {"%k%": {"a": 1}}), version) == (
        'The values of the "for_each" argument to "repeat" must be lists'
    )


@pytest.mark.parametrize("version", REPEAT_MAPS)
def test_repeat_over_map_keys(hot: Hot, version: str) -> None:
    snippet = repeat("%k%", {"%k%": {"a": 1, "b": 2}})
    assert hot.evaluate(snippet, version) == ["a", "b"]
    assert hot.error(repeat("%k%", {"%k%": 5}), version) == (
        'The values of the "for_each" argument to "repeat" must be lists or maps'
    )


@pytest.mark.parametrize("version", PERMUTATIONS)
def test_repeat_without_permutations_zips(hot: Hot, version: str) -> None:
    snippet = repeat("%a%%b%", {"%a%": ["1", "2"], "%b%": ["x", "y"]}, permutations=False)
    assert hot.evaluate(snippet, version) == ["1x", "2y"]
    uneven = repeat("%a%%b%", {"%a%": ["1"], "%b%": ["x", "y"]}, permutations=False)
    assert hot.error(uneven, version) == (
        "For repeat, the length of for_each values should be equal if no nested loop."
    )
    maps = repeat("%a%", {"%a%": {"k": "v"}}, permutations=False)
    assert hot.error(maps, version) == (
        'The values of the "for_each" argument to "repeat" must be lists'
    )
    assert hot.parse_error(repeat("x", {"%a%": []}, permutations="no"), version) == (
        '"permutations" should be boolean type for repeat function.'
    )


@pytest.mark.parametrize("version", NO_PERMUTATIONS)
def test_repeat_ignores_permutations_before_2017_09_01(hot: Hot, version: str) -> None:
    snippet = repeat("%a%%b%", {"%a%": ["1", "2"], "%b%": ["x"]}, permutations="no")
    assert hot.evaluate(snippet, version) == ["1x", "2x"]


@pytest.mark.parametrize("version", REPEAT)
def test_repeat_is_bounded(hot: Hot, version: str) -> None:
    resolver = hot.resolver(limits=Limits(max_value_size=1000))
    many = [str(i) for i in range(40)]
    product = repeat("%a%%b%", {"%a%": many, "%b%": many})  # 1600 items
    with pytest.raises(Exception, match="larger than the limit of 1000"):
        hot.evaluate(product, version, resolver)
    wide = repeat("%a%" * 50, {"%a%": ["x" * 30]})  # one item of 1500 characters
    with pytest.raises(Exception, match="larger than the limit"):
        hot.evaluate(wide, version, resolver)


# -- map_merge --------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("map_merge"))
def test_map_merge(hot: Hot, version: str) -> None:
    snippet = {"map_merge": [{"a": 1, "b": 1}, None, {"b": 2}, {}]}
    assert hot.evaluate(snippet, version) == {"a": 1, "b": 2}
    assert hot.error({"map_merge": [{"a": 1}, ["b"]]}, version) == (
        "Incorrect arguments: Items to merge must be maps."
    )
    assert hot.error({"map_merge": {"a": 1}}, version) == (
        'Incorrect arguments to "map_merge" should be: '
        '"map_merge" : [ { "key1": "val1" }, { "key2": "val2" } ]'
    )


# -- map_replace ------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("map_replace"))
def test_map_replace(hot: Hot, version: str) -> None:
    snippet = {
        "map_replace": [
            {"k1": "v1", "k2": "v2", "k3": ["unhashable"]},
            {"keys": {"k1": "K1"}, "values": {"v2": "V2"}},
        ]
    }
    assert hot.evaluate(snippet, version) == {"K1": "v1", "k2": "V2", "k3": ["unhashable"]}
    assert hot.evaluate({"map_replace": [{"a": 1}, {}]}, version) == {"a": 1}


@pytest.mark.parametrize("version", versions_having("map_replace"))
def test_map_replace_errors(hot: Hot, version: str) -> None:
    example = (
        '"map_replace" : [ { "key1": "val1" }, '
        '{"keys": {"key1": "key2"}, "values": {"val1": "val2"}}]'
    )
    usage = f'Incorrect arguments to "map_replace" should be: {example}'
    assert hot.error({"map_replace": [{"a": 1}]}, version) == usage
    assert hot.error({"map_replace": [{"a": 1}, {"other": {}}]}, version) == usage
    assert hot.error({"map_replace": "x"}, version) == usage
    assert hot.error({"map_replace": ["x", {}]}, version) == (
        'Incorrect arguments: to "map_replace", arguments must be a list of maps. '
        f"Example:  {example}"
    )
    collide_in = {"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "b"}}]}
    assert (
        hot.error(collide_in, version) == "key replacement b collides with a key in the input map"
    )
    collide_out = {"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "c", "b": "c"}}]}
    assert hot.error(collide_out, version) == (
        "key replacement c collides with a key in the output map"
    )


@pytest.mark.parametrize("version", versions_having("map_replace"))
def test_map_replace_checks_each_map_as_heat_pops_it(hot: Hot, version: str) -> None:
    """Heat pops the input map and the replacements off the list, checking
    each as it is taken, and only then looks for a third item; a map in
    place of the list has no item 0, which Heat reports as ``0``."""
    maps_only = (
        'Incorrect arguments: to "map_replace", arguments must be a list of maps. Example:  '
        '"map_replace" : [ { "key1": "val1" }, '
        '{"keys": {"key1": "key2"}, "values": {"val1": "val2"}}]'
    )
    assert hot.error_at({"map_replace": [{"a": 1}, "x", {}]}, version) == (maps_only, AT)
    assert hot.error_at({"map_replace": {"get_param": "m"}}, version, parameters={"m": {}}) == (
        "0",
        AT,
    )
    assert hot.error_at(
        {"map_replace": {"get_param": "m"}}, version, parameters={"m": {0: "x"}}
    ) == (
        maps_only,
        AT,
    )
    # still accepted: a null replacement map and nulls for either part
    assert hot.evaluate({"map_replace": [{"a": 1}, None]}, version) == {"a": 1}
    assert hot.evaluate({"map_replace": [None, {"keys": None}]}, version) == {}


@pytest.mark.parametrize("version", versions_having("map_replace"))
@pytest.mark.parametrize(("new", "kind"), [(["b"], "list"), ({"b": 1}, "dict")])
def test_map_replace_with_an_unhashable_new_key(
    hot: Hot, version: str, new: object, kind: str
) -> None:
    snippet = {"map_replace": [{"a": 1}, {"keys": {"a": new}}]}
    assert hot.error_at(snippet, version) == (f"unhashable type: '{kind}'", AT)
    # numbers and booleans are keys like any other
    assert hot.evaluate({"map_replace": [{"a": 1}, {"keys": {"a": 2}}]}, version) == {2: 1}


# -- filter -----------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("filter"))
def test_filter(hot: Hot, version: str) -> None:
    assert hot.evaluate({"filter": [[None, "b"], ["a", None, "b", "c"]]}, version) == ["a", "c"]
    assert hot.evaluate({"filter": [[{"x": 1}], [{"x": 1}, {"x": 2}]]}, version) == [{"x": 2}]
    assert hot.evaluate({"filter": [[], ["a"]]}, version) == ["a"]
    assert hot.evaluate({"filter": [["a"], []]}, version) == []
    assert hot.evaluate({"filter": [["a"], None]}, version) is None
    assert hot.parse_error({"filter": "a"}, version) == 'Argument to "filter" must be a list'
    assert hot.parse_error({"filter": [[1], [1], [1]]}, version) == (
        '"filter" expected 2 arguments of the form [values, sequence] but got 3 arguments instead'
    )
    assert hot.error({"filter": [["a"], "abc"]}, version) == '"filter" only works with lists'
    assert hot.error({"filter": ["a", ["a"]]}, version) == '"filter" filters a list of values'


# -- list_concat ------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("list_concat"))
def test_list_concat(hot: Hot, version: str) -> None:
    assert hot.evaluate({"list_concat": [["a", "b"], None, [], ["a"]]}, version) == [
        "a",
        "b",
        "a",
    ]
    assert hot.error({"list_concat": [["a"], "b"]}, version) == (
        "Incorrect arguments: Items to concat must be lists."
    )
    assert hot.error({"list_concat": "ab"}, version) == (
        'Incorrect arguments to "list_concat" should be: '
        '"list_concat" : [ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]'
    )


@pytest.mark.parametrize("version", versions_having("list_concat_unique"))
def test_list_concat_unique_keeps_the_last_occurrence(hot: Hot, version: str) -> None:
    snippet = {"list_concat_unique": [["a", "b", {"m": 1}], ["a", {"m": 1}, "c"]]}
    assert hot.evaluate(snippet, version) == ["b", "a", {"m": 1}, "c"]


@pytest.mark.parametrize("version", versions_having("list_concat_unique"))
@pytest.mark.parametrize("name", ["list_concat", "list_concat_unique"])
def test_list_concat_argument_errors(hot: Hot, version: str, name: str) -> None:
    usage = (
        f'Incorrect arguments to "{name}" should be: '
        f'"{name}" : [ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]'
    )
    for args in ("ab", {"a": ["b"]}, 5):
        assert hot.error_at({name: args}, version) == (usage, AT)
    for item in ("ab", {"a": 1}, 3):
        assert hot.error_at({name: [["a"], item]}, version) == (
            "Incorrect arguments: Items to concat must be lists.",
            AT,
        )
    assert hot.evaluate({name: []}, version) == []
    assert hot.evaluate({name: [None, ["a"]]}, version) == ["a"]


@pytest.mark.parametrize("version", versions_having("map_merge"))
def test_map_merge_argument_errors(hot: Hot, version: str) -> None:
    usage = (
        'Incorrect arguments to "map_merge" should be: '
        '"map_merge" : [ { "key1": "val1" }, { "key2": "val2" } ]'
    )
    assert hot.error_at({"map_merge": {"a": 1}}, version) == (usage, AT)
    assert hot.error_at({"map_merge": 5}, version) == (usage, AT)
    # a string is a sequence to Heat: its characters are the items
    assert hot.error_at({"map_merge": "ab"}, version) == (
        "Incorrect arguments: Items to merge must be maps.",
        AT,
    )
    assert hot.evaluate({"map_merge": []}, version) == {}
    assert hot.evaluate({"map_merge": ""}, version) == {}


def heat_unique(items: list[int]) -> list[int]:
    """Heat's own loop, to compare with."""
    items = list(items)
    for i in items:
        while items.count(i) > 1:
            del items[items.index(i)]
    return items


def test_list_concat_unique_matches_heat_where_heat_is_unique(hot: Hot) -> None:
    rng = random.Random(7)
    for _ in range(300):
        items = [rng.randint(0, 4) for _ in range(rng.randint(0, 10))]
        expected = heat_unique(items)
        got = hot.evaluate({"list_concat_unique": [items]})
        assert len(set(got)) == len(got)
        if len(set(expected)) == len(expected):
            assert got == expected


def test_measure_counts_only_up_to_the_budget() -> None:
    assert measure("abc", 10) == 3
    assert measure({"ab": [1, "cd"]}, 100) == 7  # map, key, list, number, string
    assert measure(["x" * 10**6], 100) == 101
    assert measure(list(range(10**6)), 100) == 101


def test_limits_come_from_the_resolver(hot: Hot) -> None:
    small = Limits(max_value_size=5)
    assert limits_of(hot.resolver(limits=small)) is small
    assert limits_of(object()) is DEFAULT_LIMITS
