"""if, and the condition functions equals, not, and, or and contains."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from convection.hot.functions.base import DROP, Invalid, expand, resolve
from convection.hot.functions.tables import VERSIONS, versions_having

if TYPE_CHECKING:
    from conftest import Hot

CONDITIONS = [v for v in VERSIONS if v >= "2016-10-14"]
IF_THREE = [v for v in versions_having("if") if v < "2021-04-16"]
IF_NULLABLE = [v for v in versions_having("if") if v >= "2021-04-16"]
YAQL_IN_CONDITIONS = [v for v in CONDITIONS if v >= "2017-09-01"]
NO_YAQL_IN_CONDITIONS = [v for v in CONDITIONS if v < "2017-09-01"]
STATE = {"prod": True, "dev": False}


def test_conditions_arrive_with_newton() -> None:
    assert versions_having("if") == CONDITIONS


# -- condition functions ----------------------------------------------------


@pytest.mark.parametrize("version", CONDITIONS)
def test_equals(hot: Hot, version: str) -> None:
    params = {"env": "prod", "n": 1}
    run = {"in_conditions": True, "parameters": params}
    assert hot.evaluate({"equals": [{"get_param": "env"}, "prod"]}, version, **run) is True
    assert hot.evaluate({"equals": [{"get_param": "n"}, "1"]}, version, **run) is False
    assert hot.evaluate({"equals": [[1, {"a": 2}], [1, {"a": 2}]]}, version, **run) is True
    message = 'Arguments to "equals" must be of the form: [value_1, value_2]'
    assert hot.parse_error({"equals": [1]}, version, in_conditions=True) == message
    assert hot.parse_error({"equals": "a"}, version, in_conditions=True) == message


@pytest.mark.parametrize("version", CONDITIONS)
def test_not_and_or_read_booleans_and_condition_names(hot: Hot, version: str) -> None:
    def run(snippet: object) -> object:
        return hot.evaluate(snippet, version, in_conditions=True, conditions=STATE)

    assert run({"not": "prod"}) is False
    assert run({"not": False}) is True
    assert run({"and": ["prod", True, {"not": "dev"}]}) is True
    assert run({"and": ["prod", "dev"]}) is False
    assert run({"or": ["dev", False]}) is False
    assert run({"or": ["dev", {"equals": [1, 1]}]}) is True


@pytest.mark.parametrize("version", CONDITIONS)
def test_condition_names_are_looked_up_only_when_needed(hot: Hot, version: str) -> None:
    # Heat resolves every argument, then stops at the first false one
    tree = hot.tree({"and": [False, "no_such_condition"]}, version, in_conditions=True)
    assert resolve(tree, hot.resolver(conditions=STATE)) is False
    with pytest.raises(Exception, match='Invalid condition "no_such_condition"'):
        resolve(
            hot.tree({"not": "no_such_condition"}, version, in_conditions=True),
            hot.resolver(conditions=STATE),
        )
    with pytest.raises(Exception, match='Invalid condition "3"'):
        resolve(hot.tree({"or": [False, 3]}, version, in_conditions=True), hot.resolver())


@pytest.mark.parametrize("version", CONDITIONS)
def test_condition_function_shapes(hot: Hot, version: str) -> None:
    assert hot.parse_error({"not": None}, version, in_conditions=True) == (
        'Argument to "not" must be a condition'
    )
    assert hot.parse_error({"and": ["prod"]}, version, in_conditions=True) == (
        'The minimum number of condition arguments to "and" is 2.'
    )
    assert hot.parse_error({"or": "prod"}, version, in_conditions=True) == (
        'Arguments to "or" must be a list of conditions'
    )


@pytest.mark.parametrize("version", CONDITIONS)
@pytest.mark.parametrize("name", ["get_attr", "get_resource", "list_join", "if", "map_merge"])
def test_other_functions_are_invalid_in_conditions(hot: Hot, version: str, name: str) -> None:
    snippet = {"equals": [{name: ["a", "b", "c"]}, "x"]}
    assert hot.parse_error(snippet, version, in_conditions=True) == (
        f'The function "{name}" is invalid in this context'
    )


@pytest.mark.parametrize("version", NO_YAQL_IN_CONDITIONS)
def test_yaql_and_contains_are_not_conditions_before_pike(hot: Hot, version: str) -> None:
    snippet = {"yaql": {"expression": "true"}}
    assert hot.parse_error(snippet, version, in_conditions=True) == (
        'The function "yaql" is invalid in this context'
    )
    # contains does not exist at all before pike: plain data
    tree = hot.tree({"contains": ["a", ["a"]]}, version, in_conditions=True)
    assert tree == {"contains": ["a", ["a"]]}


@pytest.mark.parametrize("version", YAQL_IN_CONDITIONS)
def test_yaql_and_contains_are_conditions_from_pike(hot: Hot, version: str) -> None:
    assert hot.evaluate({"yaql": {"expression": "1 < 2"}}, version, in_conditions=True) is True
    assert hot.evaluate({"contains": ["a", ["a", "b"]]}, version, in_conditions=True) is True


@pytest.mark.parametrize("version", CONDITIONS)
def test_removed_functions_stay_removed_in_conditions(hot: Hot, version: str) -> None:
    assert hot.validate(
        {"equals": [{"Fn::Select": [0, ["a"]]}, "a"]}, version, in_conditions=True
    ) == [
        "The template version is invalid: "
        "The function Fn::Select is not supported in this version of HOT."
    ]


# -- contains ---------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("contains"))
def test_contains(hot: Hot, version: str) -> None:
    assert hot.evaluate({"contains": ["b", ["a", "b"]]}, version) is True
    assert hot.evaluate({"contains": [{"x": 1}, [{"x": 1}]]}, version) is True
    assert hot.evaluate({"contains": ["c", "abc"]}, version) is True  # a string is a sequence
    assert hot.evaluate({"contains": ["z", []]}, version) is False
    assert hot.parse_error({"contains": "a"}, version) == (
        'Incorrect arguments to "contains" should be: '
        '"contains" : [ "value1", [ "value1", "value2"]]'
    )
    assert hot.parse_error({"contains": ["a"]}, version) == (
        'Arguments to "contains" must be of the form: [value1, [value1, value2]]'
    )
    assert hot.error({"contains": ["a", {"a": 1}]}, version) == (
        'Second argument to "contains" should be a sequence.'
    )


@pytest.mark.parametrize("version", versions_having("contains"))
@pytest.mark.parametrize("in_conditions", [False, True])
def test_contains_looks_with_pythons_in(hot: Hot, version: str, in_conditions: bool) -> None:
    """A string is a sequence to Heat, and Python's ``in`` refuses anything
    but a string in one, in its own words; in a list anything is looked for."""
    run = {"in_conditions": in_conditions}
    for value, kind in ((1, "int"), (["a"], "list"), ({"a": 1}, "dict"), (None, "NoneType")):
        assert hot.error({"contains": [value, "abc"]}, version, **run) == (
            f"'in <string>' requires string as left operand, not {kind}"
        )
    assert hot.evaluate({"contains": [1, [1, 2]]}, version, **run) is True
    assert hot.evaluate({"contains": [None, [None]]}, version, **run) is True
    assert hot.evaluate({"contains": ["", "abc"]}, version, **run) is True
    for sequence in (None, 5, {"a": 1}):
        assert hot.error({"contains": ["a", sequence]}, version, **run) == (
            'Second argument to "contains" should be a sequence.'
        )


@pytest.mark.parametrize("version", versions_having("contains"))
def test_contains_argument_errors_in_conditions(hot: Hot, version: str) -> None:
    where = ("conditions", "c")
    assert hot.parse_error_at({"contains": ["a"]}, version, in_conditions=True, path=where) == (
        'Arguments to "contains" must be of the form: [value1, [value1, value2]]',
        where,
    )
    assert hot.parse_error_at({"contains": []}, version, in_conditions=True, path=where) == (
        'Incorrect arguments to "contains" should be: '
        '"contains" : [ "value1", [ "value1", "value2"]]',
        where,
    )


# -- if ---------------------------------------------------------------------


@pytest.mark.parametrize("version", CONDITIONS)
def test_if_chooses_by_condition(hot: Hot, version: str) -> None:
    def run(snippet: object, **data: object) -> object:
        return hot.evaluate(snippet, version, conditions=STATE, **data)

    assert run({"if": ["prod", "big", "small"]}) == "big"
    assert run({"if": ["dev", "big", "small"]}) == "small"
    assert run({"if": [False, 1, 2]}) == 2
    assert run({"if": [None, 1, 2]}) == 1  # no condition is true in Heat
    inline = {"if": [{"equals": [{"get_param": "env"}, "prod"]}, "p", "d"]}
    assert run(inline, parameters={"env": "prod"}) == "p"
    # a condition function in "if" may name another condition
    assert run({"if": [{"not": "prod"}, "x", "y"]}) == "y"
    # branches hold ordinary functions, expanded and resolved in turn
    nested = {"if": ["prod", {"list_join": ["-", ["a", {"if": ["dev", "b", "c"]}]]}, "n"]}
    assert run(nested) == "a-c"


@pytest.mark.parametrize("version", CONDITIONS)
def test_if_errors(hot: Hot, version: str) -> None:
    shape = 'Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]'
    assert hot.parse_error({"if": ["prod", 1, 2, 3]}, version) == shape
    assert hot.parse_error({"if": "prod"}, version) == shape
    assert hot.parse_error({"if": [["a"], 1, 2]}, version) == "Invalid condition \"['a']\""
    assert hot.parse_error({"if": [{"get_attr": ["a", "b"]}, 1, 2]}, version) == (
        'The function "get_attr" is invalid in this context'
    )
    assert hot.validate({"if": ["nope", 1, 2]}, version, conditions={"prod"}) == [
        'Invalid condition "nope"'
    ]
    assert hot.error({"if": ["nope", 1, 2]}, version, conditions=STATE) == (
        'Invalid condition "nope"'
    )


@pytest.mark.parametrize("version", IF_THREE)
def test_if_needs_three_arguments_before_wallaby(hot: Hot, version: str) -> None:
    assert hot.parse_error({"if": ["prod", 1]}, version) == (
        'Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]'
    )


@pytest.mark.parametrize("version", IF_NULLABLE)
def test_if_without_else_drops_the_item_in_wallaby(hot: Hot, version: str) -> None:
    snippet = {
        "keep": {"if": ["prod", "yes"]},
        "gone": {"if": ["dev", "yes"]},
        "list": ["a", {"if": ["dev", "b"]}, "c"],
    }
    assert hot.evaluate(snippet, version, conditions=STATE) == {"keep": "yes", "list": ["a", "c"]}
    tree = hot.tree({"if": ["dev", "x"]}, version)
    assert expand(tree, hot.resolver(conditions=STATE)) is DROP


@pytest.mark.parametrize("version", IF_NULLABLE)
def test_dropped_item_inside_function_arguments(hot: Hot, version: str) -> None:
    # get_attr loses its attribute and so returns every attribute, as in Heat
    snippet = {"get_attr": ["server", {"if": ["dev", "name"]}]}
    attrs = {"server": {"name": "s1", "id": "1"}}
    assert hot.evaluate(snippet, version, conditions=STATE, attributes=attrs) == attrs["server"]


@pytest.mark.parametrize("version", CONDITIONS)
def test_if_as_the_arguments_of_a_function(hot: Hot, version: str) -> None:
    # Heat expands the macro before building the call that holds it
    snippet = {"list_join": {"if": ["prod", [",", ["a", "b"]], ["-", ["c"]]]}}
    assert hot.evaluate(snippet, version, conditions=STATE) == "a,b"
    bad = {"list_join": {"if": ["prod", "oops", [",", ["a"]]]}}
    tree = expand(hot.tree(bad, version), hot.resolver(conditions=STATE))
    assert isinstance(tree, Invalid)
    assert [d.message for d in hot.diagnostics(tree, version)] == [
        'Incorrect arguments to "list_join" should be: "list_join" : [ " ", [ "str1", "str2"] ...]'
    ]
