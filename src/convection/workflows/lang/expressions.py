"""Mistral's expressions: YAQL (``<% ... %>``) and Jinja (``{{ ... }}``,
``{% ... %}``) in the strings of a workflow, pure and sandboxed.

Detection and evaluation follow ``mistral/expressions/__init__.py`` and
its two evaluators:

* a string is Jinja if it holds ``{{...}}`` or ``{%...%}``, else YAQL if
  it holds ``<%...%>`` (``.`` stops at a newline in all three patterns);
  one string holding both is an error, with Mistral's message;
* a string that is exactly one expression returns its typed value; any
  other returns a string: each YAQL expression is replaced by Python's
  ``str()`` of its value, a Jinja string is rendered as a template;
* in dicts and lists only values are evaluated, never keys; anything
  else is returned as it is.

The data context is ``$`` in YAQL and ``_`` in Jinja, with its
``__env``, ``__execution`` and ``__task_execution`` bound as variables,
as Mistral binds them. Expressions read it through read-only views
(``expr_data``), so a shared context is never copied nor changed, and a
value an expression only reads comes back as the very same object.
The functions that need the engine (``task()``, ``tasks()``,
``execution()``, ``executions()``, ``env()``, ``global()``) ask the
:class:`ExpressionHost` the caller passes (``expr_state``).

Every evaluation runs under ``Limits``: yaql's iterator and memory
quotas, a wall-clock deadline (``yaql_timeout``, one per :func:`evaluate`
call) and a cap on built strings (``max_value_size``); Jinja runs in
Jinja's sandbox under the same budgets as far as its hooks reach
(``expr_jinja``). A failure is an :class:`EvaluationError` whose
``message`` is Mistral's and whose ``path`` locates the string.

Differences from Mistral, each on purpose: a string holding both
languages is refused when evaluated too (Mistral refuses it only at
upload and then renders it as Jinja); a Jinja string of blocks only
(``{% if %}...{% endif %}``) is rendered (Mistral fails with an
IndexError there); an empty data context is still evaluated (Mistral's
``evaluate_recursively`` returns the data unevaluated when the context
is empty).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Final

from convection.common import DEFAULT_LIMITS, Limits, Path
from convection.workflows.lang import expr_jinja, expr_yaql
from convection.workflows.lang.expr_data import freeze
from convection.workflows.lang.expr_errors import (
    MIXED,
    EvaluationError,
    JinjaEvaluationError,
    MixedExpressionError,
    YaqlEvaluationError,
    yaql_failure,
)
from convection.workflows.lang.expr_state import (
    Exceeded,
    ExpressionHost,
    check_length,
    evaluating,
)

__all__ = [
    "EvaluationError",
    "ExpressionHost",
    "JinjaEvaluationError",
    "MixedExpressionError",
    "YaqlEvaluationError",
    "evaluate",
    "is_expression",
    "syntax_errors",
    "task_references",
]

#: Mistral's ``INLINE_YAQL_REGEXP``.
YAQL: Final = re.compile(r"<%.*?%>")

#: The one cheap test a string passes before any pattern is tried.
_MAYBE: Final = re.compile(r"<%|{{|{%")

#: ``task('name')`` (either quote) and, in YAQL, ``task(name)``: a bare
#: word is a string there.
_TASK_CALL: Final = re.compile(
    r"(?<![\w.$])task\(\s*(?:'([^'\\]*)'|\"([^\"\\]*)\"|([^\W\d]\w*))\s*\)"
)


def is_expression(text: object) -> bool:
    """Whether ``text`` is a string holding a YAQL or a Jinja expression."""
    if not isinstance(text, str) or not _MAYBE.search(text):
        return False
    return bool(expr_jinja.VARIABLE.search(text) or expr_jinja.BLOCK.search(text)) or bool(
        YAQL.search(text)
    )


def evaluate(
    value: Any,
    context: Any,
    host: ExpressionHost | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> Any:
    """``value`` with every expression in its strings evaluated against
    ``context`` (Mistral's ``evaluate_recursively``), under ``limits``.

    Containers are rebuilt, never changed in place; what an expression
    only read is returned as the object it read. Raises
    :class:`EvaluationError` with Mistral's message, located in ``value``.
    """
    data = freeze(context)
    with evaluating(limits, host, data):
        return _walk(value, data, ())


def _walk(value: Any, data: Any, path: Path) -> Any:
    if isinstance(value, str):
        return _string(value, data, path)
    if isinstance(value, dict):
        return {key: _walk(item, data, (*path, _key(key))) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, data, (*path, index)) for index, item in enumerate(value)]
    return value


def _key(key: object) -> str | int:
    return key if isinstance(key, str | int) else str(key)


def _string(text: str, data: Any, path: Path) -> Any:
    if not _MAYBE.search(text):
        return text
    jinja = expr_jinja.VARIABLE.search(text) or expr_jinja.BLOCK.search(text)
    try:
        if jinja is not None:
            if YAQL.search(text):
                raise MixedExpressionError(MIXED)
            return expr_jinja.evaluate(text, data)
        if YAQL.search(text):
            return _yaql_string(text, data)
    except EvaluationError as exc:
        raise exc.located(path) from None
    return text


def _yaql_string(text: str, data: Any) -> Any:
    """Mistral's ``InlineYAQLEvaluator.evaluate``: one whole expression is
    typed; otherwise each is replaced, in order, by ``str()`` of its value."""
    found = YAQL.findall(text)
    if len(found) == 1 and len(found[0]) == len(text):
        return expr_yaql.evaluate(_inner(found[0]).strip(), data)
    result = text
    for expression in found:
        inner = _inner(expression).strip()
        shown = str(expr_yaql.evaluate(inner, data))
        try:
            check_length(len(result) + result.count(expression) * (len(shown) - len(expression)))
        except Exceeded as exc:
            raise yaql_failure(inner, exc) from None
        result = result.replace(expression, shown)
    return result


def _inner(expression: str) -> str:
    """The text between the delimiters, as Mistral takes it (``strip("<%>")``)."""
    return expression.strip("<%>")


def syntax_errors(value: object) -> list[tuple[Path, str]]:
    """Every expression with bad syntax in ``value``: its relative path and
    Mistral's message (YAQL's parse error, Jinja's ``Syntax error '...'.``,
    or the mixing error). Dict values, dict keys and list items are walked;
    a key's path is the path of its value."""
    found: list[tuple[Path, str]] = []
    _collect(value, (), found)
    return found


def _collect(value: object, path: Path, found: list[tuple[Path, str]]) -> None:
    if isinstance(value, str):
        if _MAYBE.search(value):
            found.extend((path, message) for message in _string_errors(value))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            where = (*path, _key(key))
            if isinstance(key, str) and _MAYBE.search(key):
                found.extend((where, message) for message in _string_errors(key))
            _collect(item, where, found)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _collect(item, (*path, index), found)


@functools.lru_cache(maxsize=16384)
def _string_errors(text: str) -> tuple[str, ...]:
    """Mistral's ``expressions.validate``: Jinja is checked first, and a
    Jinja syntax error is reported before the mixing; each bad YAQL
    expression of a string is reported (Mistral stops at the first)."""
    if expr_jinja.VARIABLE.search(text) or expr_jinja.BLOCK.search(text):
        error = expr_jinja.syntax_error(text)
        if error is not None:
            return (error,)
        return (MIXED,) if YAQL.search(text) else ()
    messages = (expr_yaql.parsed(_inner(expression))[1] for expression in YAQL.findall(text))
    return tuple(message for message in messages if message is not None)


def task_references(value: object) -> tuple[str, ...]:
    """The task names ``value``'s expressions read through ``task('x')``
    (``task(x)`` too in YAQL), in order of appearance, each once. Names
    built at run time (``task($.name)``) cannot be known and are skipped."""
    names: dict[str, None] = {}
    _references(value, names)
    return tuple(names)


def _references(value: object, names: dict[str, None]) -> None:
    if isinstance(value, str):
        if "task(" in value:
            names.update(dict.fromkeys(_string_references(value)))
    elif isinstance(value, Mapping):
        for item in value.values():
            _references(item, names)
    elif isinstance(value, list | tuple):
        for item in value:
            _references(item, names)


@functools.lru_cache(maxsize=4096)
def _string_references(text: str) -> tuple[str, ...]:
    if expr_jinja.VARIABLE.search(text) or expr_jinja.BLOCK.search(text):
        parts, bare = [text], False
    else:
        parts, bare = YAQL.findall(text), True
    names: list[str] = []
    for part in parts:
        for quoted, double, word in _TASK_CALL.findall(part):
            name = quoted or double or (word if bare else "")
            if name:
                names.append(name)
    return tuple(names)
