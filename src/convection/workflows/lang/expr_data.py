"""Read-only views of the data an expression reads, and their unwrapping.

A workflow's context is shared between its tasks, never copied per task
(a 10 MB context through 100 tasks must not cost 100 copies). Mistral
converts the whole context for yaql before every evaluation
(``convert_input_data``: dicts to ``FrozenDict``, lists to tuples), which
here would be a full walk per expression, and its Jinja sandbox may
mutate what it is handed (``_.servers.append(1)``), which here would
change a context other tasks share.

So expressions get views: :class:`FrozenMap` and :class:`FrozenSeq` wrap
the data as it is, hashable and comparable as yaql's frozen types are,
converting a child only when it is read, and with no method that writes.
On the way out :func:`thaw` unwraps a view to the very object it wraps
(no copy) and turns what the expression built (yaql's frozen dicts,
tuples, iterators) into plain dicts and lists, as yaql's
``convert_output_data`` does, under the same collection limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from typing import Any, overload

from convection.workflows.lang.expr_state import check_count, check_time

_SCALARS = (str, int, float, bool, type(None))


class FrozenMap(Mapping[Any, Any]):
    """A read-only view of a mapping; children are viewed when read.

    Its only public attributes are a mapping's own (``get``, ``items``, ...),
    as on the dict itself: Jinja resolves ``_.name`` to an attribute first.
    """

    __slots__ = ("_hash", "_raw")

    def __init__(self, raw: Mapping[Any, Any]) -> None:
        self._raw = raw
        self._hash: int | None = None

    def __getitem__(self, key: Any) -> Any:
        return freeze(self._raw[key])

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return freeze(self._raw[key])
        except (KeyError, TypeError):
            return default

    def __contains__(self, key: object) -> bool:
        try:
            return key in self._raw
        except TypeError:
            return False

    def __iter__(self) -> Iterator[Any]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._raw == other._raw
        return super().__eq__(other)

    def __hash__(self) -> int:
        """As yaql's ``FrozenDict``: the xor of the items' hashes."""
        if self._hash is None:
            value = 0
            for pair in self.items():
                value ^= hash(pair)
            self._hash = value
        return self._hash

    def __repr__(self) -> str:
        return repr(self._raw)


class FrozenSeq(Sequence[Any]):
    """A read-only view of a list; items are viewed when read."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Sequence[Any]) -> None:
        self._raw = raw

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> FrozenSeq: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return FrozenSeq(self._raw[index])
        return freeze(self._raw[index])

    def __len__(self) -> int:
        return len(self._raw)

    def __iter__(self) -> Iterator[Any]:
        return (freeze(item) for item in self._raw)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenSeq):
            return self._raw == other._raw
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: object) -> list[Any]:
        """``_.servers + ['extra']`` in Jinja, as on the list itself."""
        if not isinstance(other, Iterable) or isinstance(other, str | Mapping):
            return NotImplemented
        return [*self, *other]

    def __radd__(self, other: object) -> list[Any]:
        if not isinstance(other, Iterable) or isinstance(other, str | Mapping):
            return NotImplemented
        return [*other, *self]

    def __repr__(self) -> str:
        return repr(self._raw)


def freeze(value: Any) -> Any:
    """A read-only view of ``value`` (scalars are returned as they are)."""
    if isinstance(value, (*_SCALARS, FrozenMap, FrozenSeq)):
        return value
    if isinstance(value, Mapping):
        return FrozenMap(value)
    if isinstance(value, list | tuple):
        return FrozenSeq(value)
    if isinstance(value, set):
        return frozenset(freeze(item) for item in value)
    return value


def unwrap(value: Any) -> Any:
    """The object a view wraps, or the value itself (one level only)."""
    if isinstance(value, FrozenMap | FrozenSeq):
        return value._raw
    return value


def thaw(value: Any) -> Any:
    """Plain data from an expression's result, sharing what it only read."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, FrozenMap | FrozenSeq):
        return value._raw
    if isinstance(value, Mapping):
        check_count(len(value))
        return {thaw(key): thaw(item) for key, item in value.items()}
    if isinstance(value, Sequence | Set):
        check_count(len(value))
        return _thaw_collection(value)
    if isinstance(value, Iterable):
        return _thaw_iterator(iter(value))
    return value


def _thaw_collection(value: Sequence[Any] | Set[Any]) -> Any:
    items = [thaw(item) for item in value]
    if not isinstance(value, Set):
        return items
    try:  # Mistral keeps sets (convert_sets_to_lists is False) when it can
        return set(items)
    except TypeError:
        return items


def _thaw_iterator(items: Iterator[Any]) -> list[Any]:
    """An iterator drained under the collection limit (``range(0, 1e18)``)."""
    out: list[Any] = []
    for item in items:
        check_count(len(out) + 1)
        check_time()
        out.append(thaw(item))
    return out
