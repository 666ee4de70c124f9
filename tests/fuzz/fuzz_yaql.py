"""YAQL under its limits: Mistral's expressions (``<% ... %>`` through
``convection.workflows.evaluate``) and HOT's ``yaql`` function, each under
small budgets, so that an expression that escapes them shows as a slow
input or an error that is not the language's own.

The input's first byte picks the data context and the surface; the rest is
the expression's text.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from _fuzzlib import (
    CONTEXTS,
    LIMITS,
    check_error,
    check_result,
    check_within,
    expression_seeds,
    main,
)

from convection.common import ConvectionError, Diagnostics
from convection.hot.functions.base import expand, parse, resolve
from convection.hot.versions import get_version
from convection.workflows import evaluate

VERSION = "2021-04-16"


class _Resolver:
    """The little a yaql function's evaluation asks of a stack."""

    limits = LIMITS

    def parameter(self, name: str) -> Any:
        raise KeyError(name)

    def resource_id(self, name: str) -> Any:
        raise KeyError(name)

    def attribute(self, resource: str, name: str | None) -> Any:
        raise KeyError(resource)

    def file(self, name: str) -> str | None:
        return None

    def facade(self, section: str) -> Any:
        raise KeyError(section)

    def condition(self, name: str) -> bool:
        return True


def seeds() -> list[bytes]:
    out = []
    for i, text in enumerate(e for e in expression_seeds() if "{{" not in e and "{%" not in e):
        out.append(bytes([i % (2 * len(CONTEXTS))]) + text.encode())
    return out


def _hot(expression: str, data: Any) -> Any:
    version = get_version(VERSION)
    assert version is not None
    diags = Diagnostics()
    tree = parse({"yaql": {"expression": expression, "data": data}}, version.functions, diags, ())
    if diags.has_errors:
        for d in diags:
            if not d.message.strip():
                raise AssertionError(f"a parse error without a message: {d!r}")
        return None
    resolver = _Resolver()
    return resolve(expand(tree, resolver), resolver)


def one_input(data: bytes) -> None:
    if not data:
        return
    context = CONTEXTS[data[0] % len(CONTEXTS)]
    hot = (data[0] // len(CONTEXTS)) % 2 == 1
    text = data[1:].decode("utf-8", "replace")
    started = time.monotonic()
    try:
        result = _hot(text, context) if hot else evaluate(f"<% {text} %>", context, limits=LIMITS)
    except ConvectionError as exc:
        check_error(exc)
    else:
        check_result(result)
    check_within(started, time.monotonic(), LIMITS.yaql_timeout)


if __name__ == "__main__":
    main(sys.modules[__name__])
