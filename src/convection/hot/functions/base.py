"""Intrinsic functions as an expression tree.

A template snippet is parsed **once**: every ``{fn_name: args}`` mapping whose
name is in the template version's function table becomes a :class:`Function`
node, and everything else stays plain data. The tree then answers three
questions without re-parsing:

* ``validate(scope, diags)``: static checks that need the template but no
  values (does the parameter exist, does the resource have that attribute);
* ``dependencies()``: which resources it references, for the graph;
* ``result(resolver)``: its value, once the resolver knows parameter values,
  reference ids and attributes.

:class:`Macro` nodes (Heat's ``if``) are expanded when the stack definition is
built, because they depend only on conditions; after ``expand`` the tree holds
no macros, so dependencies are exact.

Where Heat raises a function's error decides where ours is reported: argument
*shape* errors are found while parsing (``ArgumentError`` raised by
``__init__``), static reference errors by ``validate``, and value errors by
``result`` (``ExpressionError``), which for an output becomes its
``output_error`` rather than a failed template, as in Heat.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, ClassVar, Protocol

from convection.common import DEFAULT_LIMITS, Diagnostics, ExpressionError, Limits, Path


class ArgumentError(Exception):
    """Raised by a function's constructor when its arguments have the wrong shape."""


def key_error_text(message: str) -> str:
    """The text of a ``KeyError(message)``, as Heat shows it.

    Heat raises its ``syntax should be`` errors (``str_replace``,
    ``repeat``, ``yaql``) as ``KeyError``, and its parser turns every
    argument error into text with ``str()``, which for a ``KeyError`` is the
    message's ``repr``: quoted, its newlines written ``\\n``. Users search
    for that text, so it is built the same way."""
    return str(KeyError(message))


def python_type_name(value: Any) -> str:
    """How Python names a value's type in its own argument errors
    (``replace() argument 2 must be str, not int``): ``None`` for null.
    Heat lets such errors through with Python's words, so we use them too."""
    return "None" if value is None else type(value).__name__


class _Drop:
    """Sentinel: a value that removes the item enclosing it (wallaby ``if``)."""

    _instance: ClassVar[_Drop | None] = None

    def __new__(cls) -> _Drop:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "DROP"


DROP = _Drop()


class Scope(Protocol):
    """What static validation may ask about the template being validated."""

    def has_parameter(self, name: str) -> bool: ...

    def has_resource(self, name: str) -> bool: ...

    def has_condition(self, name: str) -> bool: ...

    def attribute_names(self, resource: str) -> Collection[str] | None:
        """The attributes a resource's type declares; ``None`` when unknown
        (the type allows any attribute, or is not known yet)."""
        ...

    def file(self, name: str) -> str | None:
        """The content of a ``get_file`` path, or ``None`` when absent."""
        ...


class Resolver(Protocol):
    """What evaluation may ask: values that exist only for a real stack."""

    def parameter(self, name: str) -> Any:
        """The coerced value of a parameter (or pseudo-parameter)."""
        ...

    def resource_id(self, name: str) -> Any:
        """``get_resource``: the reference id of a resource."""
        ...

    def attribute(self, resource: str, name: str | None) -> Any:
        """``get_attr``: one attribute, or all of them when ``name`` is None."""
        ...

    def file(self, name: str) -> str | None: ...

    def facade(self, section: str) -> Any:
        """``resource_facade``: metadata, deletion_policy or update_policy."""
        ...


class ExpandContext(Protocol):
    """What macro expansion may ask: condition values."""

    def condition(self, name: str) -> bool: ...


class Function:
    """A parsed ``{name: args}`` call.

    Subclasses parse and check their argument shape in ``__init__`` (raising
    :class:`ArgumentError`), and override ``result``. ``args`` is the parsed
    argument tree and may itself contain functions.
    """

    __slots__ = ("args", "name", "path")

    #: What ``template function list`` says of it: Heat's words, the summary
    #: line of its function class's docstring (``pydoc.splitdoc``).
    summary: ClassVar[str] = ""

    def __init__(self, name: str, args: Any, path: Path) -> None:
        self.name = name
        self.args = args
        self.path = path

    @classmethod
    def parse_arguments(
        cls,
        args: Any,
        table: FunctionTable,
        diags: Diagnostics,
        path: Path,
        on_unknown: UnknownHook | None = None,
    ) -> Any:
        """Parse this call's raw arguments before the constructor sees them.

        Most functions parse their arguments with the same table as the call;
        a function whose arguments follow other rules overrides this (Heat's
        ``if`` parses its condition with the condition functions, like a
        macro controlling its own parse).
        """
        return parse(args, table, diags, path, on_unknown=on_unknown)

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        validate(self.args, scope, diags)

    def dependencies(self) -> Iterator[str]:
        return dependencies(self.args)

    def result(self, resolver: Resolver) -> Any:
        raise NotImplementedError(type(self).__name__)

    def error(self, message: str) -> ExpressionError:
        """An evaluation error located at this call."""
        return ExpressionError(message, self.path)

    def to_data(self) -> dict[str, Any]:
        """Back to the template form, ``{name: args}``."""
        return {self.name: to_data(self.args)}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}: {to_data(self.args)!r}>"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Function)
            and type(other) is type(self)
            and other.name == self.name
            and other.args == self.args
        )

    def __hash__(self) -> int:
        return hash((type(self), self.name))


class Macro(Function):
    """A function resolved when the definition is built (conditions known)."""

    __slots__ = ()

    def expand(self, ctx: ExpandContext) -> Any:
        raise NotImplementedError(type(self).__name__)

    def result(self, resolver: Resolver) -> Any:  # pragma: no cover - expanded first
        raise self.error(f"{self.name} was not expanded before evaluation")


class Shaped(Function):
    """A call that checks the shape of its arguments when it is built.

    When the arguments are a macro (``list_join: {if: [...]}``) the check
    waits: expansion builds the call again from what the macro chose, as
    Heat constructs a call only after expanding its macros. Until then the
    call is ``pending`` and only its arguments are validated.
    """

    __slots__ = ()

    def __init__(self, name: str, args: Any, path: Path) -> None:
        super().__init__(name, args, path)
        if not self.pending:
            self.check(args)

    @property
    def pending(self) -> bool:
        return isinstance(self.args, Macro)

    def check(self, args: Any) -> None:
        """Raise :class:`ArgumentError` when ``args`` has the wrong shape."""

    def result(self, resolver: Resolver) -> Any:
        if self.pending:
            raise self.error(f"{self.name} was not expanded before evaluation")
        return self.evaluate(resolver)

    def evaluate(self, resolver: Resolver) -> Any:
        """The value, once the arguments are known to have the right shape."""
        raise NotImplementedError(type(self).__name__)


class Invalid(Function):
    """Stands in for a call whose arguments were rejected while parsing, so
    the rest of the template can still be checked and every error reported.

    ``reported`` is False when the rejection happened after parsing (a call
    rebuilt once its macros were expanded); validation then reports it.
    """

    __slots__ = ("message", "reported")

    def __init__(
        self, name: str, args: Any, path: Path, message: str, *, reported: bool = True
    ) -> None:
        super().__init__(name, args, path)
        self.message = message
        self.reported = reported

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        if not self.reported:
            diags.error(self.message, self.path)

    def dependencies(self) -> Iterator[str]:
        return iter(())

    def result(self, resolver: Resolver) -> Any:
        raise self.error(self.message)


FunctionTable = Mapping[str, type[Function]]
#: Called for a mapping key that is a function in a newer version only:
#: (function name, path) -> None. Used to warn.
UnknownHook = Callable[[str, Path], None]


def limits_of(resolver: object) -> Limits:
    """The limits evaluation runs under: a resolver may carry a ``limits``
    attribute; one that does not (a test double, an old caller) gets the
    defaults, so a function can never run unbounded."""
    found = getattr(resolver, "limits", None)
    return found if isinstance(found, Limits) else DEFAULT_LIMITS


def measure(value: Any, budget: int) -> int:
    """The size of ``value`` in units (a character of a string, or one per
    scalar, key or container), counted only up to ``budget + 1``: measuring a
    huge value costs at most the budget."""
    stack = [value]
    used = 0
    while stack and used <= budget:
        item = stack.pop()
        if isinstance(item, str):
            used += len(item)
        elif isinstance(item, dict | list):
            used += 1
            if used + len(item) > budget:  # every member costs at least one unit
                return budget + 1
            stack.extend(item.keys() if isinstance(item, dict) else item)
            if isinstance(item, dict):
                stack.extend(item.values())
        else:
            used += 1
    return min(used, budget + 1)


#: What may hold a function call; any other value is a leaf of plain data.
#: The walks below skip leaves without a call, since most of a template is leaves.
_BRANCHES = (dict, list)
#: What a parsed snippet may need expanding in.
_TREES = (dict, list, Function)


def parse(
    snippet: Any,
    table: FunctionTable,
    diags: Diagnostics,
    path: Path = (),
    *,
    on_unknown: UnknownHook | None = None,
) -> Any:
    """Replace function calls in ``snippet`` by :class:`Function` nodes.

    Arguments are parsed before the function itself, so nested calls are
    nodes by the time a constructor inspects them.
    """
    if isinstance(snippet, dict):
        if len(snippet) == 1:
            ((name, args),) = snippet.items()
            fn = table.get(name)
            if fn is not None:
                parsed = fn.parse_arguments(args, table, diags, (*path, name), on_unknown)
                try:
                    return fn(name, parsed, path)
                except ArgumentError as exc:
                    diags.error(str(exc), path)
                    return Invalid(name, parsed, path, str(exc))
            if on_unknown is not None:
                on_unknown(name, path)
        return {
            k: parse(v, table, diags, (*path, k), on_unknown=on_unknown)
            if isinstance(v, _BRANCHES)
            else v
            for k, v in snippet.items()
        }
    if isinstance(snippet, list):
        return [
            parse(v, table, diags, (*path, i), on_unknown=on_unknown)
            if isinstance(v, _BRANCHES)
            else v
            for i, v in enumerate(snippet)
        ]
    return snippet


def _functions(snippet: Any) -> Iterator[Function]:
    """The outermost function calls in a snippet, in document order.

    Iterative: a generator per level of nesting would pass every item up
    through each level, and this runs over every resource of a template.
    """
    pending = [snippet]
    while pending:
        item = pending.pop()
        if isinstance(item, Function):
            yield item
        elif isinstance(item, dict):
            pending.extend(reversed(item.values()))
        elif isinstance(item, list):
            pending.extend(reversed(item))


def validate(snippet: Any, scope: Scope, diags: Diagnostics) -> None:
    for fn in _functions(snippet):
        fn.validate(scope, diags)


def dependencies(snippet: Any) -> Iterator[str]:
    """Names of the resources a snippet references, possibly repeated."""
    for fn in _functions(snippet):
        yield from fn.dependencies()


def expand(snippet: Any, ctx: ExpandContext) -> Any:
    """Expand every macro; items whose value expands to DROP are removed.

    A call whose arguments held a macro is built again from the expanded
    arguments: Heat expands macros before it constructs the enclosing call,
    so that call checks the arguments it finally gets, not the macro. When
    the arguments as a whole expand to DROP (``get_param: {if: [false,
    x]}`` from 2021-04-16) the call gets null, as Heat's ``resolve`` hands a
    function null for a dropped value, so it says what it says of no
    arguments (``Function "get_param" must have arguments``).
    """
    return _expand(snippet, ctx)[0]


def _expand(snippet: Any, ctx: ExpandContext) -> tuple[Any, bool]:
    """The expanded snippet, and whether a macro was expanded inside it.

    A container with no macro inside comes back as it is, not copied: most
    of a template has none, and its function nodes are shared anyway.
    """
    changed = False
    while isinstance(snippet, Macro):
        snippet = snippet.expand(ctx)
        changed = True
    if isinstance(snippet, Function):
        args, inner = _expand(snippet.args, ctx)
        if args is DROP:
            args = None
        if not inner or isinstance(snippet, Invalid):
            snippet.args = args
            return snippet, changed
        try:
            return type(snippet)(snippet.name, args, snippet.path), True
        except ArgumentError as exc:
            return Invalid(snippet.name, args, snippet.path, str(exc), reported=False), True
    if isinstance(snippet, dict):
        out = {}
        inside = False
        for k, v in snippet.items():
            value, inner = _expand(v, ctx) if isinstance(v, _TREES) else (v, False)
            inside = inside or inner
            if value is not DROP:
                out[k] = value
        return (out, True) if inside else (snippet, changed)
    if isinstance(snippet, list):
        items = []
        inside = False
        for v in snippet:
            value, inner = _expand(v, ctx) if isinstance(v, _TREES) else (v, False)
            inside = inside or inner
            if value is not DROP:
                items.append(value)
        return (items, True) if inside else (snippet, changed)
    return snippet, changed


def resolve(snippet: Any, resolver: Resolver) -> Any:
    """Evaluate every function in a snippet; raises ExpressionError."""
    while isinstance(snippet, Function):
        snippet = snippet.result(resolver)
    if isinstance(snippet, dict):
        return {k: resolve(v, resolver) for k, v in snippet.items()}
    if isinstance(snippet, list):
        return [resolve(v, resolver) for v in snippet]
    return snippet


def to_data(snippet: Any) -> Any:
    """The template form of a parsed snippet (functions back to mappings)."""
    if isinstance(snippet, Function):
        return snippet.to_data()
    if isinstance(snippet, dict):
        return {k: to_data(v) for k, v in snippet.items()}
    if isinstance(snippet, list):
        return [to_data(v) for v in snippet]
    return snippet


def has_functions(snippet: Any) -> bool:
    if isinstance(snippet, Function):
        return True
    if isinstance(snippet, dict):
        return any(has_functions(v) for v in snippet.values())
    if isinstance(snippet, list):
        return any(has_functions(v) for v in snippet)
    return False
