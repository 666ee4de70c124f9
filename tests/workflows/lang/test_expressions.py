"""Mistral's expressions: detection, typing, data context, functions, errors.

Expected values and messages are Mistral's (``mistral/expressions/*.py``
at HEAD); where Convection differs on purpose the test says so.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from convection.common import ExpressionError, Limits
from convection.workflows.lang.expressions import (
    EvaluationError,
    JinjaEvaluationError,
    MixedExpressionError,
    YaqlEvaluationError,
    evaluate,
    is_expression,
    syntax_errors,
    task_references,
)

MIXED = (
    "The line already contains an expression of type 'jinja'. "
    "Mixing expression types in a single line is not allowed."
)


class FakeHost:
    """An engine stand-in that answers from fixed data and records each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.task_rows = {
            None: {"name": "current", "state": "RUNNING", "result": None},
            "fetch": {
                "id": "t-1",
                "name": "fetch",
                "state": "SUCCESS",
                "state_info": None,
                "result": {"hosts": ["a", "b"]},
                "published": {"count": 2},
            },
        }

    def task(self, name: str | None) -> Mapping[str, Any] | None:
        self.calls.append(("task", (name,)))
        return self.task_rows.get(name)

    def tasks(
        self, workflow_execution_id: str | None, recursive: bool, state: str | None, flat: bool
    ) -> Sequence[Mapping[str, Any]]:
        self.calls.append(("tasks", (workflow_execution_id, recursive, state, flat)))
        return [{"name": "fetch", "state": state or "SUCCESS"}]

    def execution(self) -> Mapping[str, Any]:
        self.calls.append(("execution", ()))
        return {"id": "wf-1", "input": {"n": 3}}

    def executions(
        self,
        execution_id: str | None,
        root_execution_id: str | None,
        state: str | None,
        from_time: str | None,
        to_time: str | None,
    ) -> Sequence[Mapping[str, Any]]:
        self.calls.append(
            ("executions", (execution_id, root_execution_id, state, from_time, to_time))
        )
        return [{"id": execution_id or "wf-1"}]

    def env(self) -> Mapping[str, Any]:
        self.calls.append(("env", ()))
        return {"region": "north"}

    def global_context(self) -> Mapping[str, Any]:
        self.calls.append(("global_context", ()))
        return {"token_count": 7}


@pytest.fixture
def host() -> FakeHost:
    return FakeHost()


def message(value: Any, context: Any = None, host: Any = None, **limits: Any) -> str:
    """The message of the evaluation error ``value`` raises."""
    with pytest.raises(EvaluationError) as caught:
        evaluate(value, {} if context is None else context, host, limits=Limits(**limits))
    return caught.value.message


# -- detection and typing ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<% 1 + 2 %>", 3),
        ("<% [1, 2] %>", [1, 2]),
        ("<% {a => 1} %>", {"a": 1}),
        ("<% true %>", True),
        ("<% null %>", None),
        ("{{ 1 + 2 }}", 3),
        ("{{ [1, 2] }}", [1, 2]),
        ("{{ {'a': 1} }}", {"a": 1}),
        ("{{ none }}", None),
    ],
)
def test_a_whole_string_expression_returns_its_typed_value(text: str, expected: Any) -> None:
    result = evaluate(text, {})
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<% 1 %> x", "1 x"),
        (" <% 1 %>", " 1"),  # not the whole string: Mistral compares lengths
        ("<% {a => 1} %>!", "{'a': 1}!"),  # Python's str(), as Mistral
        ("<% true %>/<% null %>", "True/None"),
        ("<% 1 %><% 1 + 1 %>", "12"),
        ("{{ 1 }} x", "1 x"),
        ("{{ 1 }}{{ 2 }}", "12"),
        ("{% if true %}yes{% endif %}", "yes"),  # Mistral fails here (IndexError)
        ("{% for i in [1, 2] %}\n{{ i }}\n{% endfor %}\n", "1\n2\n"),  # trim/lstrip
    ],
)
def test_an_embedded_expression_is_rendered_into_the_string(text: str, expected: str) -> None:
    assert evaluate(text, {}) == expected


def test_each_distinct_yaql_expression_is_replaced_everywhere_it_occurs() -> None:
    assert evaluate("<% $.a %>-<% $.a %>-<% $.b %>", {"a": 1, "b": 2}) == "1-1-2"


def test_patterns_stop_at_a_newline_as_mistrals_do() -> None:
    assert evaluate("{{ 1\n}}", {}) == "{{ 1\n}}"
    assert evaluate("<% 1\n%>", {}) == "<% 1\n%>"
    assert not is_expression("<% 1\n%>")


def test_keys_are_never_evaluated_and_values_are_walked() -> None:
    value = {"<% $.k %>": ["<% $.k %>", {"{{ _.k }}": "{{ _.k }}"}, 7, None], "n": 1.5}
    assert evaluate(value, {"k": "v"}) == {
        "<% $.k %>": ["v", {"{{ _.k }}": "v"}, 7, None],
        "n": 1.5,
    }


def test_the_value_evaluated_is_not_changed() -> None:
    value = {"a": ["<% 1 %>"]}
    evaluate(value, {})
    assert value == {"a": ["<% 1 %>"]}


def test_a_string_without_expressions_is_returned_as_it_is() -> None:
    assert evaluate("plain {text} <not %>", {}) == "plain {text} <not %>"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("<% $ %>", True),
        ("a {{ b }} c", True),
        ("{% if x %}{% endif %}", True),
        ("{ {x} }", False),
        ("50%", False),
        ("", False),
    ],
)
def test_is_expression(text: str, found: bool) -> None:
    assert is_expression(text) is found


def test_is_expression_of_a_non_string_is_false() -> None:
    assert is_expression(3) is False
    assert is_expression(["<% 1 %>"]) is False


def test_mixing_yaql_and_jinja_in_one_string_is_an_error() -> None:
    with pytest.raises(MixedExpressionError) as caught:
        evaluate({"a": ["{{ 1 }} <% 2 %>"]}, {})
    assert caught.value.message == MIXED
    assert caught.value.path == ("a", 0)


# -- the data context -------------------------------------------------------


def test_the_data_context_is_dollar_in_yaql_and_underscore_in_jinja() -> None:
    context = {"servers": [{"name": "a"}, {"name": "b"}]}
    assert evaluate("<% $.servers.select($.name) %>", context) == ["a", "b"]
    assert evaluate("{{ _.servers | map(attribute='name') | list }}", context) == ["a", "b"]


def test_the_special_keys_are_variables_as_mistral_binds_them() -> None:
    context = {"__execution": {"id": "wf-1"}, "__task_execution": {"name": "t"}}
    assert evaluate("<% $__execution.id %>", context) == "wf-1"
    assert evaluate("<% $__task_execution.name %>", context) == "t"
    assert evaluate("{{ __execution.id }}", context) == "wf-1"
    assert evaluate("{{ __env }}", context) is None


def test_a_value_read_is_the_same_object_not_a_copy() -> None:
    context = {"big": {"rows": [[1, 2], {"x": [3]}]}}
    assert evaluate("<% $.big %>", context) is context["big"]
    assert evaluate("<% $.big.rows %>", context) is context["big"]["rows"]
    assert evaluate("{{ _.big }}", context) is context["big"]
    assert evaluate("<% $ %>", context) is context


def test_the_fast_path_for_keys_agrees_with_yaql() -> None:
    context = {"a": [{"b": 1}, {"b": 2}], "m": {"b": {"c": 3}}}
    assert evaluate("<% $.a.b %>", context) == [1, 2]  # over a list: yaql maps it
    assert evaluate("<% $.m.b.c %>", context) == 3
    assert message("<% $.m.nope %>", context) == (
        "Can not evaluate YAQL expression [expression=$.m.nope, error='nope']"
    )


def test_jinja_cannot_change_the_shared_context_but_may_change_its_own_lists() -> None:
    context = {"servers": ["a"]}
    assert message("{{ _.servers.append('b') }}", context) == (
        "Can not evaluate Jinja expression [expression={{ _.servers.append('b') }}, "
        "error='list object' has no attribute 'append']"
    )
    assert context == {"servers": ["a"]}
    assert evaluate("{% set l = [] %}{{ l.append(1) }}{{ l }}", {}) == "None[1]"
    assert evaluate("{{ _.servers + ['b'] }}", context) == ["a", "b"]


def test_views_hash_and_compare_as_yaqls_frozen_data() -> None:
    context = {"a": [[1], [1], {"k": 1}, {"k": 1}], "b": {"k": 1}}
    assert evaluate("<% $.a.distinct() %>", context) == [[1], {"k": 1}]
    assert evaluate("<% $.b = {k => 1} %>", context) is True
    assert evaluate("<% $.a[0] = [1] %>", context) is True
    assert evaluate("{{ _.b == {'k': 1} }}", context) is True


def test_jinja_tojson_writes_the_data_as_plain_text() -> None:
    result = evaluate("{{ _.b | tojson }}", {"b": {"k": [1]}})
    assert result == '{"k": [1]}'
    assert type(result) is str


# -- functions --------------------------------------------------------------


def test_task_with_no_name_asks_the_host_for_the_current_task(host: FakeHost) -> None:
    assert evaluate("<% task().name %>", {}, host) == "current"
    assert evaluate("{{ task().state }}", {}, host) == "RUNNING"
    assert host.calls == [("task", (None,)), ("task", (None,))]


def test_task_by_name_bare_in_yaql_and_quoted_in_jinja(host: FakeHost) -> None:
    assert evaluate("<% task(fetch).result.hosts %>", {}, host) == ["a", "b"]
    assert evaluate("<% task('fetch').published.count %>", {}, host) == 2
    assert evaluate("{{ task('fetch').result.hosts | join(',') }}", {}, host) == "a,b"
    assert evaluate("<% task(missing) %>", {}, host) is None
    assert [args for _, args in host.calls] == [("fetch",), ("fetch",), ("fetch",), ("missing",)]


def test_tasks_takes_mistrals_arguments_in_both_languages(host: FakeHost) -> None:
    assert evaluate("<% tasks() %>", {}, host) == [{"name": "fetch", "state": "SUCCESS"}]
    evaluate("<% tasks($__execution.id, true, ERROR, true) %>", {"__execution": {"id": "w"}}, host)
    evaluate("<% tasks(workflowExecutionId => w2, state => ERROR) %>", {}, host)
    evaluate("{{ tasks(workflow_execution_id='w3', recursive=true) }}", {}, host)
    assert [args for _, args in host.calls] == [
        (None, False, None, False),
        ("w", True, "ERROR", True),
        ("w2", False, "ERROR", False),
        ("w3", True, None, False),
    ]


def test_execution_and_executions(host: FakeHost) -> None:
    assert evaluate("<% execution().input.n %>", {}, host) == 3
    assert evaluate("{{ execution().id }}", {}, host) == "wf-1"
    assert evaluate("<% executions(id => e9) %>", {}, host) == [{"id": "e9"}]
    assert host.calls[-1] == ("executions", ("e9", None, None, None, None))


def test_env_reads_the_host_or_without_one_the_data_env(host: FakeHost) -> None:
    assert evaluate("<% env().region %>", {}, host) == "north"
    assert evaluate("{{ env().region }}", {}, host) == "north"
    # an environment evaluated against itself (Mistral's ``{__env: env}``)
    assert evaluate("<% env().a %>", {"__env": {"a": 1}}) == 1


def test_global_reads_the_workflow_executions_context(host: FakeHost) -> None:
    assert evaluate("<% global(token_count) %>", {}, host) == 7
    assert evaluate("{{ global('token_count') }}", {}, host) == 7
    assert evaluate("<% global(nothing) %>", {}, host) is None


def test_a_function_that_needs_the_engine_fails_without_a_host() -> None:
    assert message("<% task(x) %>") == (
        "Can not evaluate YAQL expression [expression=task(x), "
        "error=task() needs a workflow execution, and there is none here]"
    )


def test_json_functions() -> None:
    assert evaluate("<% json_parse('{\"a\": [1]}') %>", {}) == {"a": [1]}
    assert evaluate("<% json_dump($.d) %>", {"d": {"a": [1]}}) == json.dumps({"a": [1]}, indent=4)
    assert evaluate("{{ json_dump(_.d) }}", {"d": {"a": 1}}) == '{\n    "a": 1\n}'
    assert evaluate("{{ _.d | json_dump }}", {"d": [1]}) == "[\n    1\n]"
    assert evaluate("{{ _ | json_dump(_.d) }}", {"d": 2}) == "2"  # Mistral's filter form


def test_yaml_functions_read_anchors_as_text_and_write_no_aliases() -> None:
    assert evaluate("<% yaml_parse($.t) %>", {"t": "a: &x 1\nb: *x\n"}) == {"a": "&x 1", "b": "*x"}
    shared = {"k": 1}
    assert evaluate("<% yaml_dump($.d) %>", {"d": {"a": shared, "b": shared}}) == (
        "a:\n  k: 1\nb:\n  k: 1\n"
    )


def test_uuid_is_a_new_uuid4_each_time() -> None:
    first, second = evaluate(["<% uuid() %>", "{{ uuid() }}"], {})
    assert uuid.UUID(first).version == 4
    assert uuid.UUID(second).version == 4
    assert first != second


# -- the sandbox and the budgets --------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "{{ ''.__class__.__mro__ }}",
            "access to attribute '__class__' of 'str' object is unsafe.",
        ),
        ("{{ _.a.__class__ }}", "access to attribute '__class__' of 'int' object is unsafe."),
        ("{{ _.__class__ }}", "access to attribute '__class__' of 'dict' object is unsafe."),
        ("{{ _._raw }}", "'dict object' has no attribute '_raw'"),  # the view's own is hidden
        ("{{ lipsum() }}", "'lipsum' is undefined"),
    ],
)
def test_jinja_refuses_what_its_sandbox_refuses(text: str, error: str) -> None:
    assert message(text, {"a": 1}) == (
        f"Can not evaluate Jinja expression [expression={text}, error={error}]"
    )


@pytest.mark.parametrize(
    "text",
    ["<% sequence() %>", "<% sequence().select($ * 2) %>", "<% range(0, 100000000).where(true) %>"],
)
def test_an_endless_yaql_collection_is_stopped_by_the_iteration_limit(text: str) -> None:
    assert message(text).endswith("error=Collection length exceeds 10000 elements]")


def test_yaqls_memory_quota_applies() -> None:
    assert message("<% 'x' * 200000 %>") == (
        "Can not evaluate YAQL expression [expression='x' * 200000, "
        "error=Expression consumed too much memory]"
    )


@pytest.mark.parametrize(
    "text",
    [
        "<% range(0, 10000).selectMany(range(0, 10000)).len() %>",
        "{% set r = range(9000) %}{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}",
        "{% macro f(n) %}{% for i in range(9000) %}{% endfor %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    ],
)
def test_a_long_evaluation_is_stopped_by_the_deadline(text: str) -> None:
    import time

    started = time.monotonic()
    error = message(text, yaql_timeout=0.2)
    assert time.monotonic() - started < 2.0
    assert error.endswith("error=the evaluation took longer than 0.2 seconds]")


def test_the_deadline_covers_the_whole_value_evaluated() -> None:
    slow = "<% range(0, 20).select(range(0, 100).sum()).sum() %>"  # ~0.1 s
    assert evaluate(slow, {}, limits=Limits(yaql_timeout=1.0)) == 99000
    error = message([slow] * 50, yaql_timeout=1.0)
    assert "took longer than 1.0 seconds" in error


def test_a_jinja_loop_longer_than_the_iteration_limit_is_refused() -> None:
    assert message("{% for i in range(20000) %}{% endfor %}").endswith(
        "error=Collection length exceeds 10000 elements]"
    )
    assert evaluate("{% for i in range(3) %}{{ loop.length }}{% endfor %}", {}) == "333"


@pytest.mark.parametrize(
    "text",
    [
        "{{ 'x' * 10 ** 9 }}",
        "{{ 'x' | center(10 ** 9) }}",
        "{{ 'x'.ljust(10 ** 9) }}",
        "{{ '%999999999d' % 1 }}",
        "{{ '{:>999999999}'.format(1) }}",
        "{{ 'ab' | replace('', 'x' * 3000000) }}",
        "{% set ns = namespace(s='x') %}{% for i in range(40) %}"
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    ],
)
def test_jinja_cannot_build_a_string_past_the_output_cap(text: str) -> None:
    assert message(text).endswith("error=the result would be longer than 4194304 characters]")


def test_numbers_too_large_to_hold_are_refused_in_both_languages() -> None:
    assert message("<% pow(10, 100000000) %>").endswith(
        "error=the number would be longer than 4194304 bytes]"
    )
    assert message("<% shiftBitsLeft(1, 100000000000) %>").endswith("longer than 4194304 bytes]")
    assert message("{{ 10 ** 100000000 }}").endswith("longer than 4194304 bytes]")
    assert evaluate("<% pow(2, 10) %> <% 6 * 7 %>", {}) == "1024 42"
    assert evaluate("{{ 2 ** 10 * 3 }}", {}) == 3072


def test_rendered_output_is_capped() -> None:
    text = "{% for i in range(100) %}0123456789{% endfor %}"
    assert len(evaluate(text, {}, limits=Limits(max_value_size=1000))) == 1000
    assert message(text, max_value_size=999).endswith(
        "error=the result would be longer than 999 characters]"
    )
    assert message("<% $.s %><% $.s %>", {"s": "y" * 600}, max_value_size=999).endswith(
        "error=the result would be longer than 999 characters]"
    )


# -- errors -------------------------------------------------------------------


def test_an_error_carries_mistrals_message_and_where_the_string_is() -> None:
    with pytest.raises(YaqlEvaluationError) as caught:
        evaluate({"input": {"hosts": "<% $.nope %>"}}, {"a": 1})
    error = caught.value
    assert isinstance(error, ExpressionError)
    assert error.message == "Can not evaluate YAQL expression [expression=$.nope, error='nope']"
    assert error.path == ("input", "hosts")
    assert str(error) == f"input.hosts: {error.message}"
    assert error.__cause__ is None and error.__suppress_context__


def test_a_jinja_error_names_the_whole_string() -> None:
    with pytest.raises(JinjaEvaluationError) as caught:
        evaluate(["ok", "x {{ _.a.nope }}"], {"a": {}})
    assert caught.value.message == (
        "Can not evaluate Jinja expression [expression=x {{ _.a.nope }}, "
        "error='dict object' has no attribute 'nope']"
    )
    assert caught.value.path == (1,)


def test_a_grammar_error_met_when_evaluating_is_an_evaluation_error() -> None:
    assert message("<% 1 + %>") == (
        "Can not evaluate YAQL expression [expression=1 +, "
        "error=Parse error: unexpected end of statement]"
    )


# -- syntax_errors ------------------------------------------------------------


def test_syntax_errors_lists_each_bad_expression_with_its_path_and_message() -> None:
    value = {
        "input": {"a": "<% $.x + %>", "b": ["fine <% $.y %>", "{{ 1 + }}"]},
        "publish": {"<% ) %>": "{% if %}"},
        "mixed": "{{ 1 }} and <% 2 %>",
        "two": "<% ( %> and <% ] %>",
        "count": 3,
    }
    assert syntax_errors(value) == [
        (("input", "a"), "Parse error: unexpected end of statement"),
        (("input", "b", 1), "Syntax error 'unexpected 'end of print statement''."),
        (("publish", "<% ) %>"), "Parse error: unexpected ')' at position 1 of expression ' ) '"),
        (
            ("publish", "<% ) %>"),
            "Syntax error 'Expected an expression, got 'end of statement block''.",
        ),
        (("mixed",), MIXED),
        (("two",), "Parse error: unexpected end of statement"),
        (("two",), "Parse error: unexpected ']' at position 1 of expression ' ] '"),
    ]


def test_a_jinja_syntax_error_is_reported_before_the_mixing() -> None:
    assert syntax_errors("{{ 1 + }} <% 2 %>") == [
        ((), "Syntax error 'unexpected 'end of print statement''.")
    ]


def test_a_lexical_error_is_reported_in_yaqls_words() -> None:
    assert syntax_errors(["<% 'a %>"]) == [
        ((0,), "Lexical error: illegal character ''' at position 1")
    ]


def test_good_expressions_and_plain_strings_have_no_errors() -> None:
    assert (
        syntax_errors({"a": "<% $.x.where($ > 1) %>", "b": "{{ _.x | join(',') }}", "c": "x"}) == []
    )
    assert syntax_errors(None) == []


def test_syntax_errors_never_parses_a_string_without_markers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from convection.workflows.lang import expr_jinja, expr_yaql

    def refuse(*_: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(expr_yaql, "parsed", refuse)
    monkeypatch.setattr(expr_jinja, "syntax_error", refuse)
    assert syntax_errors({"a": ["50% {not} <b>", "x" * 10_000], "k": {"v": "%>"}}) == []


def test_syntax_errors_of_a_large_workflow_is_fast() -> None:
    import time

    tasks = {
        f"t{i}": {
            "action": "std.echo",
            "input": {"output": f"<% $.x{i} + task(t{i - 1}).result %>", "msg": f"hello {i}"},
            "publish": {f"v{i}": f"{{{{ task('t{i}').result | join(',') }}}}"},
            "on-success": [f"t{i + 1}"],
        }
        for i in range(500)
    }
    started = time.perf_counter()
    assert syntax_errors({"tasks": tasks}) == []
    cold = time.perf_counter() - started
    started = time.perf_counter()
    assert syntax_errors({"tasks": tasks}) == []
    warm = time.perf_counter() - started
    assert cold < 1.0  # ~0.07 s here; generous for a shared machine
    assert warm < cold / 3  # parsed expressions are cached by their text


# -- task_references ----------------------------------------------------------


def test_task_references_lists_the_tasks_an_expression_reads() -> None:
    value = {
        "a": "<% task(fetch).result %> and <% task('check').state %>",
        "b": ["{{ task('deploy') }} {{ task(name) }} {{ task('fetch') }}"],
        "c": "<% tasks() %> <% $.task(x) %> <% task() %> <% task($.n) %>",
        "task('keys_are_not_read')": 1,
    }
    assert task_references(value) == ("fetch", "check", "deploy")
