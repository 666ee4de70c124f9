"""Jinja under its limits: Mistral's sandboxed Jinja (``{{ ... }}`` and
``{% ... %}`` through ``convection.workflows.evaluate``), under small
budgets, so that a template that escapes them (a loop, a string or a
number too large) shows as a slow input or an error that is not Jinja's own.

The input's first byte picks the data context and whether the rest is one
whole expression (``{{ rest }}``) or a template text of its own.
"""

from __future__ import annotations

import sys
import time

from _fuzzlib import (
    CONTEXTS,
    LIMITS,
    check_error,
    check_result,
    check_within,
    expression_seeds,
    main,
)

from convection.common import ConvectionError
from convection.workflows import evaluate

EXTRA = (
    "{{ range(10) | list }}",
    "{% for i in range(3) %}{{ i }}{% endfor %}",
    "{{ 'a' * 10 }}",
    "{{ _.data | sum }}",
    "{{ _.m.a + 1 }}",
    "{{ 2 ** 10 }}",
    "{% set x = [1, 2] %}{{ x | join(',') }}",
    "{{ _.s | upper | replace('A', 'b') }}",
)


def seeds() -> list[bytes]:
    out = []
    texts = [e for e in expression_seeds() if "{{" in e or "{%" in e] + list(EXTRA)
    for i, text in enumerate(texts):
        out.append(bytes([len(CONTEXTS) + i % len(CONTEXTS)]) + text.encode())
        whole = text.strip()
        if whole.startswith("{{") and whole.endswith("}}") and whole.count("{{") == 1:
            out.append(bytes([i % len(CONTEXTS)]) + whole[2:-2].strip().encode())
    return out


def one_input(data: bytes) -> None:
    if not data:
        return
    context = CONTEXTS[data[0] % len(CONTEXTS)]
    raw = (data[0] // len(CONTEXTS)) % 2 == 1
    text = data[1:].decode("utf-8", "replace")
    value = text if raw else "{{ " + text + " }}"
    started = time.monotonic()
    try:
        result = evaluate(value, context, limits=LIMITS)
    except ConvectionError as exc:
        check_error(exc)
    else:
        check_result(result)
    check_within(started, time.monotonic(), LIMITS.yaql_timeout)


if __name__ == "__main__":
    main(sys.modules[__name__])
