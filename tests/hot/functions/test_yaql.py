"""yaql: evaluation, parse-once, and the sandbox's three budgets."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from convection.common.limits import Limits
from convection.hot.functions import yaql_fn
from convection.hot.functions.base import resolve
from convection.hot.functions.tables import versions_having

if TYPE_CHECKING:
    from conftest import Hot

YAQL = versions_having("yaql")


def yaql(expression: object, **data: object) -> dict[str, object]:
    body: dict[str, object] = {"expression": expression}
    if data:
        body["data"] = data
    return {"yaql": body}


@pytest.mark.parametrize("version", YAQL)
def test_yaql(hot: Hot, version: str) -> None:
    assert hot.evaluate(yaql("$.data.a.sum()", a=[3, 2, 1]), version) == 6
    assert hot.evaluate(yaql("1 + 2"), version) == 3
    assert hot.evaluate(yaql("$.data.m.keys()", m={"x": 1}), version) == ["x"]
    assert hot.evaluate(yaql("$.data.a.toSet()", a=[1, 1]), version) == [1]
    params = {"xs": [1, 2, 3]}
    snippet = {"yaql": {"expression": "$.data.xs.max()", "data": {"xs": {"get_param": "xs"}}}}
    assert hot.evaluate(snippet, version, parameters=params) == 3


@pytest.mark.parametrize("version", YAQL)
def test_yaql_argument_errors(hot: Hot, version: str) -> None:
    assert hot.parse_error({"yaql": "1"}, version) == 'Arguments to "yaql" must be a map.'
    # Heat raises it as a KeyError: the text is quoted, its newlines escaped
    syntax = (
        '\'"yaql" syntax should be yaql:\\n'
        "              expression: $.data.var1.sum()\\n"
        "              data:\\n"
        "                var1: [3, 2, 1]'"
    )
    assert hot.parse_error({"yaql": {"data": {}}}, version) == syntax
    assert hot.parse_error({"yaql": {"expression": "1", "extra": 1}}, version) == syntax
    assert hot.parse_error(yaql("$.data.a.sum("), version).startswith("Bad expression ")
    assert hot.parse_error(yaql(5), version) == (
        'The "expression" argument to yaql must contain a string.'
    )


@pytest.mark.parametrize("version", YAQL)
def test_yaql_expression_from_another_function(hot: Hot, version: str) -> None:
    snippet = {"yaql": {"expression": {"get_param": "e"}, "data": {"n": 4}}}
    assert hot.evaluate(snippet, version, parameters={"e": "$.data.n * 2"}) == 8
    assert hot.error(snippet, version, parameters={"e": "$.data.n *"}).startswith("Bad expression ")
    assert hot.error(snippet, version, parameters={"e": 7}) == (
        'The "expression" argument to yaql must contain a string.'
    )


def test_yaql_literal_expression_is_parsed_once(hot: Hot, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = hot.tree(yaql("$.data.n + 1", n=1))

    def no_parsing(name: str, expression: object) -> object:
        raise AssertionError("parsed again")

    monkeypatch.setattr(yaql_fn, "parse_expression", no_parsing)
    resolver = hot.resolver()
    assert [resolve(tree, resolver) for _ in range(3)] == [2, 2, 2]


def test_yaql_evaluation_errors_are_expression_errors(hot: Hot) -> None:
    assert hot.error(yaql("1 / 0")) == "ZeroDivisionError: integer division or modulo by zero"
    assert hot.error(yaql("$.data.a.nosuchmethod()", a=[1])) == (
        'Unknown method "nosuchmethod" for receiver (1,)'
    )


def test_yaql_limit_iterators(hot: Hot) -> None:
    resolver = hot.resolver(limits=Limits(yaql_limit_iterators=10))
    assert hot.evaluate(yaql("range(0, 10).sum()"), resolver=resolver) == 45
    with pytest.raises(Exception, match="Collection length exceeds 10 elements"):
        hot.evaluate(yaql("range(0, 11).sum()"), resolver=resolver)


def test_yaql_memory_quota(hot: Hot) -> None:
    resolver = hot.resolver(limits=Limits(yaql_memory_quota=1000))
    with pytest.raises(Exception, match="Expression consumed too much memory"):
        hot.evaluate(yaql("'a' * 5000"), resolver=resolver)


def test_yaql_wall_clock_timeout(hot: Hot) -> None:
    limits = Limits(yaql_limit_iterators=10**9, yaql_timeout=0.2)
    started = time.monotonic()
    with pytest.raises(Exception, match=r'"yaql" took longer than 0.2 seconds'):
        hot.evaluate(yaql("range(0, 100000000).select($ * 2).sum()"), limits=limits)
    assert time.monotonic() - started < 5


def test_yaql_budget_ends_with_the_evaluation(hot: Hot) -> None:
    with pytest.raises(Exception, match="Collection length"):
        hot.evaluate(yaql("range(0, 50).sum()"), limits=Limits(yaql_limit_iterators=10))
    # the next evaluation runs under its own (default) limits again
    assert hot.evaluate(yaql("range(0, 50).sum()")) == 1225
