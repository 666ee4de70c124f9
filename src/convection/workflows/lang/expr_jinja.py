"""Jinja as Mistral runs it (``mistral/expressions/jinja_expression.py``),
sandboxed and budgeted.

Mistral's environment: ``SandboxedEnvironment(undefined=StrictUndefined,
trim_blocks=True, lstrip_blocks=True)``, its functions both as filters and
as callables, the data context as ``_`` and its ``__env``,
``__execution`` and ``__task_execution`` as variables. A string that is
one ``{{ ... }}`` is compiled as an expression and returns its typed
value; any other is rendered as a template.

Jinja's sandbox refuses private attributes (``__class__``, ``__mro__``,
...) and unsafe callables, and caps ``range`` at 100,000 items; it knows
no deadline or size. The budgets of the evaluation in progress are
enforced "as far as Jinja allows", where its hooks reach:

* every call, attribute and item read checks the deadline; every loop's
  iterable is wrapped (the template's tree is rewritten before it is
  compiled) so each item checks it too, and a loop over more than
  yaql's ``limitIterators`` items is refused;
* ``+``, ``*``, ``**``, ``%`` and ``~`` are checked before they build a
  string, list or number past the caps, as are the filters and ``str``
  methods that take a width or count (``center``, ``indent``,
  ``wordwrap``, ``batch``, ``slice``, ``replace``, ``ljust``, ...), a
  number in a format string (``'%9999999999d'``), and every string a
  call or filter returns; the rendered output is summed as it is made;
* ``lipsum`` is removed (it builds text of any size in one call).

A single builtin running long on a string inside the caps can still
overrun the deadline, and a MemoryError is reported in Mistral's words.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from typing import Any, Final

from jinja2 import StrictUndefined, TemplateError, nodes
from jinja2.exceptions import TemplateRuntimeError, UndefinedError
from jinja2.runtime import Context, Undefined
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import missing
from jinja2.visitor import NodeTransformer

from convection.workflows.lang.expr_data import freeze, thaw, unwrap
from convection.workflows.lang.expr_errors import jinja_failure, jinja_out_of_memory
from convection.workflows.lang.expr_functions import FUNCTIONS, TAKES_DATA
from convection.workflows.lang.expr_state import (
    check_bits,
    check_count,
    check_length,
    check_time,
    limits,
)

#: Mistral's patterns: a variable and a block (``.`` stops at a newline).
VARIABLE: Final = re.compile(r"{{(.*?)}}")
BLOCK: Final = re.compile(r"{%(.*?)%}")

_SPECIAL: Final = ("__env", "__execution", "__task_execution")
_DIGITS: Final = re.compile(r"\d+")


class _Undefined(StrictUndefined):
    """StrictUndefined whose messages name a view as the type it wraps
    (``'dict object' has no attribute 'x'``, as in Mistral)."""

    __slots__ = ()

    def __init__(
        self,
        hint: str | None = None,
        obj: Any = missing,
        name: str | None = None,
        exc: type[TemplateRuntimeError] = UndefinedError,
    ) -> None:
        super().__init__(hint, unwrap(obj), name, exc)


class _Budgeter(NodeTransformer):
    """Routes every loop's iterable and every ``~`` through the budget."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _environment_call("budget_iter", [node.iter], node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        parts = nodes.List(list(node.nodes), lineno=node.lineno)
        return _environment_call("budget_concat", [parts], node.lineno)


def _environment_call(name: str, args: list[Any], lineno: int) -> nodes.Call:
    target = nodes.EnvironmentAttribute(name, lineno=lineno)
    return nodes.Call(target, args, [], None, None, lineno=lineno)


class _Sandbox(SandboxedEnvironment):
    """Jinja's sandbox with the budgets of the evaluation in progress."""

    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def _generate(
        self,
        source: nodes.Template,
        name: str | None,
        filename: str | None,
        defer_init: bool = False,
    ) -> str:
        _Budgeter().visit(source)
        source.set_environment(self)
        return super()._generate(source, name, filename, defer_init)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        _check_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        check_time()
        _check_str_method(__obj, args)
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(result, str):
            check_length(len(result))
        return result

    def getattr(self, obj: Any, attribute: str) -> Any:
        check_time()
        if _private(obj, attribute):
            return freeze(super().getattr(unwrap(obj), attribute))
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        check_time()
        if _private(obj, argument):
            return freeze(super().getitem(unwrap(obj), argument))
        return super().getitem(obj, argument)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:
            _check_format(value.__self__)
        return wrapped

    def budget_iter(self, iterable: Any) -> Any:
        """A loop's iterable, each item under the deadline and the count."""
        if isinstance(iterable, Undefined) or not isinstance(iterable, Iterable):
            return iterable  # Jinja reports it as it would
        if isinstance(iterable, Sized):
            check_count(len(iterable))
        return _counted(iter(iterable))

    def budget_concat(self, parts: list[Any]) -> str:
        """``a ~ b``: Jinja's ``str_join``, refused past the output cap."""
        texts = [str(part) for part in parts]
        check_length(sum(len(text) for text in texts))
        return "".join(texts)


def _private(obj: Any, name: Any) -> bool:
    """``_._raw``, ``_.__class__``: a view's private names are the data's,
    so these read (or are refused) exactly as on the dict itself."""
    return isinstance(name, str) and name.startswith("_") and unwrap(obj) is not obj


def _counted(items: Iterator[Any]) -> Iterator[Any]:
    for count, item in enumerate(items, 1):
        check_time()
        check_count(count)
        yield item


def _check_binop(operator: str, left: Any, right: Any) -> None:
    if operator == "*":
        _check_repeat(left, right)
        _check_repeat(right, left)
        if _ints(left, right):
            check_bits(abs(left).bit_length() + abs(right).bit_length())
    elif operator == "+":
        if isinstance(left, str) and isinstance(right, str):
            check_length(len(left) + len(right))
        elif _sized(left) and _sized(right):
            check_count(len(left) + len(right))
    elif operator == "**":
        if _ints(left, right) and right > 0 and abs(left) > 1:
            check_bits(abs(left).bit_length() * right)
    elif operator == "%" and isinstance(left, str):
        _check_format(left)


def _check_repeat(value: Any, times: Any) -> None:
    if not isinstance(times, int) or isinstance(times, bool):
        return
    if isinstance(value, str):
        check_length(len(value) * times)
    elif isinstance(value, list | tuple):
        check_count(len(value) * times)


def _ints(left: Any, right: Any) -> bool:
    return all(isinstance(x, int) and not isinstance(x, bool) for x in (left, right))


def _sized(value: Any) -> bool:
    return isinstance(value, Sized) and not isinstance(value, str | dict)


def _check_format(text: str) -> None:
    """A width or precision in a format string past the output cap."""
    current = limits()
    if current is None:
        return
    digits = len(str(current.max_value_size))
    for number in _DIGITS.findall(text):
        if len(number) >= digits:
            check_length(int(number))


def _check_str_method(function: Any, args: tuple[Any, ...]) -> None:
    """``'x'.ljust(10 ** 9)`` and friends, refused before they run."""
    if not isinstance(function, types.BuiltinMethodType):
        return
    owner = getattr(function, "__self__", None)
    if not isinstance(owner, str) or not args:
        return
    name = function.__name__
    if name in {"ljust", "rjust", "center", "zfill"} and isinstance(args[0], int):
        check_length(args[0])
    elif name == "expandtabs" and isinstance(args[0], int):
        check_length(len(owner) * max(args[0], 1))
    elif name == "replace" and len(args) >= 2:
        _check_replace(owner, args[0], args[1], args[2] if len(args) > 2 else -1)
    elif name == "join" and isinstance(args[0], Sized):
        check_length(len(owner) * len(args[0]))


def _check_replace(text: Any, old: Any, new: Any, count: Any) -> None:
    if not all(isinstance(x, str) for x in (text, old, new)):
        return
    found = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    check_length(len(text) + found * (len(new) - len(old)))


def _filter_checks(arguments: inspect.BoundArguments, name: str) -> None:
    given = arguments.arguments
    if name in {"center", "indent", "wordwrap"} and isinstance(given.get("width"), int):
        check_length(given["width"])
    elif name == "batch" and isinstance(given.get("linecount"), int):
        check_count(given["linecount"])
    elif name == "slice" and isinstance(given.get("slices"), int):
        check_count(given["slices"])
    elif name == "format" and isinstance(given.get("value"), str):
        _check_format(given["value"])
    elif name == "replace":
        _check_replace(given.get("s"), given.get("old"), given.get("new"), given.get("count"))


_CHECKED_FILTERS: Final = frozenset({"center", "indent", "wordwrap", "batch", "slice", "format"})


def _budgeted_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """A filter under the deadline, its size arguments and its result checked."""
    signature = inspect.signature(function) if name in _CHECKED_FILTERS | {"replace"} else None

    @functools.wraps(function)  # keeps Jinja's pass_context / pass_environment marks
    def budgeted(*args: Any, **kwargs: Any) -> Any:
        check_time()
        if signature is not None:
            _filter_checks(signature.bind(*args, **kwargs), name)
        result = function(*args, **kwargs)
        if isinstance(result, str):
            check_length(len(result))
        return result

    return budgeted


def _as_callable(function: Callable[..., Any]) -> Callable[..., Any]:
    """A Mistral function as Jinja calls it: ``task('name')``."""

    def call(*args: Any, **kwargs: Any) -> Any:
        plain = [thaw(a) for a in args]
        named = {k: thaw(v) for k, v in kwargs.items()}
        return freeze(function(*plain, **named))

    call.__name__ = function.__name__
    return call


def _as_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """A Mistral function as a filter. Mistral passes the piped value as the
    function's context argument (``{{ _ | task('name') }}``); a function of
    data given no other argument takes the piped value (``{{ x | json_dump }}``)."""
    call = _as_callable(function)

    def as_filter(value: Any, *args: Any, **kwargs: Any) -> Any:
        if name in TAKES_DATA and not args and not kwargs:
            return call(value)
        return call(*args, **kwargs)

    return as_filter


def _dumps(value: Any, **kwargs: Any) -> str:
    """``tojson``'s dumps: a view is written as the data it wraps."""
    return json.dumps(value, default=_view_default, **kwargs)


def _view_default(value: Any) -> Any:
    raw = unwrap(value)
    if raw is value:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return raw


def _environment() -> _Sandbox:
    env = _Sandbox(undefined=_Undefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.pop("lipsum", None)
    for name, function in FUNCTIONS.items():
        env.globals[name] = _as_callable(function)
        env.filters[name] = _as_filter(name, function)
    for name, function in list(env.filters.items()):
        env.filters[name] = _budgeted_filter(name, function)
    env.policies["json.dumps_function"] = _dumps
    return env


_env: Final = _environment()


@functools.lru_cache(maxsize=4096)
def syntax_error(text: str) -> str | None:
    """Mistral's ``InlineJinjaEvaluator.validate`` message, or None."""
    try:
        _env.parse(text)
    except TemplateError as exc:
        return f"Syntax error '{exc}'."
    return None


@functools.lru_cache(maxsize=4096)
def _template(text: str) -> Any:
    return _env.from_string(text)


@functools.lru_cache(maxsize=4096)
def _expression(text: str) -> Any:
    return _env.compile_expression(text, undefined_to_none=False)


def evaluate(text: str, data: Any) -> Any:
    """The value of a string holding Jinja, against the frozen data context,
    or Mistral's evaluation error."""
    whole = VARIABLE.match(text)
    context = _context(data)
    try:
        if whole is not None and whole.end() == len(text):
            return _typed(whole.group(1), context)
        return _render(text, context)
    except _OutOfMemory as exc:
        raise jinja_out_of_memory(str(exc)) from None
    except Exception as exc:  # user code: whatever it raises is its error
        raise jinja_failure(text, exc) from None


def _context(data: Any) -> dict[str, Any]:
    context = {"_": data}
    if isinstance(data, Mapping):
        for name in _SPECIAL:
            context[name] = data.get(name)
    return context


def _typed(expression: str, context: dict[str, Any]) -> Any:
    try:
        result = _expression(expression)(**context)
    except MemoryError:  # Mistral's own message for this one, not wrapped again
        raise _OutOfMemory(expression) from None
    if isinstance(result, Undefined):
        str(result)  # StrictUndefined raises only when used, as Mistral's str() does
    if isinstance(result, str):
        return str(result)  # tojson's Markup, as the plain text it is
    return thaw(result)


class _OutOfMemory(Exception):
    """A whole-string expression ran out of memory."""


def _render(text: str, context: dict[str, Any]) -> str:
    parts: list[str] = []
    size = 0
    for chunk in _template(text).generate(**context):
        size += len(chunk)
        check_length(size)
        parts.append(chunk)
    return "".join(parts)
