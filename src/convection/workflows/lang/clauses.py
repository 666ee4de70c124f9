"""``on-success``, ``on-error``, ``on-complete``, ``on-skip`` and ``publish``.

The shapes are Mistral's ``OnClauseSpec`` (mistral/lang/v2/on_clause.py):

* a task name: ``t2``;
* a guarded entry, a one-key mapping: ``t2: <% $.ok %>``;
* a list of those, with no item twice;
* the advanced form ``{publish: {branch, global, atomic}, next: <one of
  the above>}``.

A name is one of three forms, and must be exactly one of them (jsonschema's
``oneOf``): a word without spaces (``t2``, ``t3.task``), ``name key=value``
(``fail msg="boom"``) or ``name(key=value)`` (``fail(msg=<% $.x %>)``).
Each entry is then split as an inline command, so ``fail msg="boom"``
targets ``fail`` with ``{msg: boom}``.
"""

from __future__ import annotations

import re
from typing import Any, Final

from convection.common import Path
from convection.workflows.lang._check import (
    EXPECT_EXPRESSION,
    Checker,
    distinct,
    is_expression,
    nonempty_mapping,
    show,
)
from convection.workflows.lang.inline import check_params, split_command
from convection.workflows.lang.specs import OnClause, Publish, Transition

_NAME_FORMS: Final = (
    re.compile(r"^\S+$"),
    re.compile(r"^\w+ \w+=(.*)$"),
    re.compile(r"^\w+\(\w+=(.*)\)$"),
)

_PLAIN: Final = re.compile(r"[^\s(]+")

_PUBLISH_KEYS: Final = ("branch", "global", "atomic")


def _forms(name: str) -> int:
    if _PLAIN.fullmatch(name):
        return 1  # the common case, only the first form
    return sum(1 for form in _NAME_FORMS if form.search(name))


def parse_clause(ck: Checker, value: Any, path: Path) -> OnClause | None:
    """One ``on-*`` clause as written (task-defaults are merged later)."""
    if _is_advanced(value):
        ck.unknown_keys(value, ("publish", "next"), path, "an on-clause mapping")
        publish = None
        if "publish" in value:
            publish = parse_publish(ck, value["publish"], (*path, "publish"))
        found = parse_next(ck, value["next"], (*path, "next")) if "next" in value else ()
        return OnClause(found or (), publish)
    found = parse_next(ck, value, path)
    return None if found is None else OnClause(found)


def _is_advanced(value: Any) -> bool:
    """A mapping with ``publish`` or ``next``, unless it is one guarded
    entry for a task that happens to be named so."""
    if not isinstance(value, dict) or not ("publish" in value or "next" in value):
        return False
    return not (len(value) == 1 and is_expression(next(iter(value.values()))))


def parse_next(ck: Checker, value: Any, path: Path) -> tuple[Transition, ...] | None:
    if isinstance(value, str | dict):
        entry = _entry(ck, value, path)
        return None if entry is None else (entry,)
    if isinstance(value, list):
        if not value:
            ck.error("[] is too short: expected at least one task or engine command", path)
            return None
        distinct(ck, value, path)
        entries = [_entry(ck, item, (*path, i)) for i, item in enumerate(value)]
        return tuple(e for e in entries if e is not None)
    ck.error(
        f"{show(value)} is not valid under any of the given schemas: expected a task "
        "name, 'name: <% condition %>', a list of them, or {publish: ..., next: ...}",
        path,
    )
    return None


def _entry(ck: Checker, item: Any, path: Path) -> Transition | None:
    if isinstance(item, str):
        return _target(ck, item, None, path) if _name_ok(ck, item, path) else None
    if isinstance(item, dict) and len(item) == 1:
        name, condition = next(iter(item.items()))
        if _forms(name) and not is_expression(condition):
            ck.error(
                f"{show(condition)} is not valid under any of the given schemas: the "
                f"condition of {name!r} must be {EXPECT_EXPRESSION}",
                (*path, name),
            )
            return None
        ck.expressions(condition, (*path, name))
        return _target(ck, name, condition, path)
    if isinstance(item, dict):
        count = "does not have enough" if not item else "has too many"
        ck.error(
            f"{show(item)} {count} properties: a guarded entry is one 'name: <% condition %>'",
            path,
        )
        return None
    ck.error(
        f"{show(item)} is not valid under any of the given schemas: expected a task name "
        "or 'name: <% condition %>'",
        path,
    )
    return None


def _name_ok(ck: Checker, name: str, path: Path) -> bool:
    forms = _forms(name)
    if forms == 1:
        return True
    if forms == 0:
        ck.error(
            f"{show(name)} is not valid under any of the given schemas: expected a task "
            "name, 'name key=value' (fail msg=\"...\") or 'name(key=value)'",
            path,
        )
    else:
        ck.error(
            f"{show(name)} is valid under each of the given schemas (a bare name and "
            "'name(key=value)'); Mistral refuses it: write it with a space, "
            "as 'name key=value'",
            path,
        )
    return False


def _target(ck: Checker, text: str, condition: Any, path: Path) -> Transition | None:
    command = split_command(text)
    if command is None:
        ck.error(f"Invalid action/workflow task property: {text}", path)
        return None
    check_params(ck, command, path)
    guard = condition if isinstance(condition, str) else None
    return Transition(command.name, guard, command.params, path)


def parse_publish(ck: Checker, value: Any, path: Path) -> Publish | None:
    """``PublishSpec``: a mapping of ``branch``, ``global`` and ``atomic``,
    at least one given, each a non-empty mapping."""
    if not isinstance(value, dict):
        ck.error(f"{show(value)} is not of type 'object': expected branch, global or atomic", path)
        return None
    ck.unknown_keys(value, _PUBLISH_KEYS, path, "publish")
    sections: dict[str, dict[str, Any]] = {}
    for key in _PUBLISH_KEYS:
        if key in value and nonempty_mapping(ck, value[key], (*path, key)):
            ck.expressions(value[key], (*path, key))
            sections[key] = value[key]
    if not any(key in value for key in _PUBLISH_KEYS):
        ck.error("Either 'branch', 'global' or 'atomic' must be specified", path)
        return None
    if "atomic" in sections:
        ck.warning("'atomic' is accepted but not applied, as in Mistral", (*path, "atomic"))
    return Publish(
        sections.get("branch", {}), sections.get("global", {}), sections.get("atomic", {})
    )
