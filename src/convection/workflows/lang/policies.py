"""Task policies: ``retry``, ``wait-before``, ``wait-after``, ``timeout``,
``pause-before``, ``concurrency`` and ``fail-on``.

Shapes are Mistral's ``PoliciesSpec`` and ``RetrySpec``
(mistral/lang/v2/policies.py, retry_policy.py): counts are integers from
0 or expressions (``'1'`` and ``1.0`` are neither), flags are booleans or
expressions. ``retry`` is a mapping with ``count`` and ``delay``
required, or the one-line ``count=3 delay=5 break-on=<% ... %>``, read
as inline parameters (so ``count=3`` alone, without a space, reads as no
parameters at all, as in Mistral).

:func:`merge` is ``construct_policies_list`` (mistral/engine/policies.py):
each policy comes from the task unless the task's value would not apply,
then from task-defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from convection.common import Path
from convection.workflows.lang._check import (
    Checker,
    expression,
    expression_or_bool,
    expression_or_count,
    show,
)
from convection.workflows.lang.inline import check_params, split_command
from convection.workflows.lang.specs import Policies, Retry

#: Policy keys, in Mistral's build order.
POLICY_KEYS: Final = (
    "pause-before",
    "wait-before",
    "wait-after",
    "fail-on",
    "retry",
    "timeout",
    "concurrency",
)

_COUNTS: Final = ("wait-before", "wait-after", "timeout", "concurrency")
_FLAGS: Final = ("pause-before", "fail-on")
_RETRY_KEYS: Final = ("count", "delay", "break-on", "continue-on")


def parse_policies(ck: Checker, data: Mapping[str, Any], path: Path) -> Policies:
    """The policies written in a task or in task-defaults."""
    values: dict[str, Any] = {}
    for key in _COUNTS:
        if key in data and expression_or_count(ck, data[key], (*path, key)):
            ck.expressions(data[key], (*path, key))
            values[key.replace("-", "_")] = data[key]
    for key in _FLAGS:
        if key in data and expression_or_bool(ck, data[key], (*path, key)):
            ck.expressions(data[key], (*path, key))
            values[key.replace("-", "_")] = data[key]
    if "retry" in data:
        values["retry"] = parse_retry(ck, data["retry"], (*path, "retry"))
    return Policies(**values)


def parse_retry(ck: Checker, value: Any, path: Path) -> Retry | None:
    if isinstance(value, str) and value:
        command = split_command(value)
        if command is None:
            ck.error(f"Invalid action/workflow task property: {value}", path)
            return None
        check_params(ck, command, path)
        hint = "" if " " in value else " (one line without a space has no parameters)"
        return _retry_fields(ck, command.params, path, one_line=True, hint=hint)
    if isinstance(value, dict):
        return _retry_fields(ck, value, path, one_line=False)
    ck.error(
        f"{show(value)} is not valid under any of the given schemas: expected "
        "{count: N, delay: N[, break-on, continue-on]} or 'count=N delay=N'",
        path,
    )
    return None


def _retry_fields(
    ck: Checker, data: Mapping[str, Any], path: Path, *, one_line: bool, hint: str = ""
) -> Retry | None:
    """One-line values have no places of their own: errors name the line."""

    def at(key: str) -> Path:
        return path if one_line else (*path, key)

    ok = True
    for key in data:
        if key not in _RETRY_KEYS:
            ck.error(
                f"Additional properties are not allowed ({key!r} was unexpected): retry "
                f"takes {', '.join(_RETRY_KEYS)}",
                at(key),
            )
            ok = False
    checks: dict[str, Callable[[Checker, object, Path], bool]] = {
        "count": expression_or_count,
        "delay": expression_or_count,
        "break-on": expression,
        "continue-on": expression,
    }
    for key, check in checks.items():
        if key in data:
            ok = check(ck, data[key], at(key)) and ok
            if not one_line:
                ck.expressions(data[key], at(key))
        elif key in ("count", "delay"):
            ck.error(f"{key!r} is a required property of retry{hint}", path)
            ok = False
    if not ok:
        return None
    return Retry(data["count"], data["delay"], data.get("break-on"), data.get("continue-on"))


def _applies(value: object) -> bool:
    """Whether Mistral builds the policy for this value: an expression
    always, a number only above 0, a flag only when true."""
    return isinstance(value, str) or bool(value)


def merge(task: Policies, defaults: Policies | None) -> Policies:
    if defaults is None:
        return task

    def pick(name: str) -> Any:
        own = getattr(task, name)
        return own if _applies(own) else getattr(defaults, name)

    return Policies(
        retry=task.retry if task.retry is not None else defaults.retry,
        wait_before=pick("wait_before"),
        wait_after=pick("wait_after"),
        timeout=pick("timeout"),
        pause_before=pick("pause_before"),
        concurrency=pick("concurrency"),
        fail_on=pick("fail_on"),
    )
