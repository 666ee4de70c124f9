"""Tasks and task-defaults.

Every key of Mistral's ``TaskSpec`` schema (mistral/lang/v2/tasks.py),
checked as its schema checks it. Unlike a workflow's, a task's unknown
keys are errors (``additionalProperties: False``), and the keys of the
other workflow type too: ``join`` and ``on-*`` belong to direct
workflows, ``requires`` to reverse ones. ``name``, ``version`` and
``type`` are accepted and ignored, because Mistral overwrites them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from convection.common import JSON, Path
from convection.workflows.lang._check import (
    Checker,
    expression_or_bool,
    is_count,
    nonempty_mapping,
    nonempty_string,
    show,
    string_or_strings,
    unique_strings,
)
from convection.workflows.lang.clauses import parse_clause
from convection.workflows.lang.inline import check_params, split_command
from convection.workflows.lang.limits import MAX_JOIN_TASK_NAME_LENGTH, MAX_TASK_NAME_LENGTH
from convection.workflows.lang.policies import POLICY_KEYS, merge, parse_policies
from convection.workflows.lang.specs import (
    CLAUSE_KEYS,
    Event,
    OnClause,
    TaskDefaults,
    TaskSpec,
    WithItems,
    WorkflowType,
)

_COMMON_KEYS: Final = (
    "description",
    "tags",
    "action",
    "workflow",
    "input",
    "with-items",
    "publish",
    "publish-on-error",
    "publish-on-skip",
    *POLICY_KEYS,
    "target",
    "keep-result",
    "safe-rerun",
)
_DIRECT_KEYS: Final = ("join", *CLAUSE_KEYS.values())
_REVERSE_KEYS: Final = ("requires",)
#: Keys Mistral sets itself on every task, whatever the author wrote.
_OVERWRITTEN: Final = ("name", "version", "type")

TASK_KEYS: Final[Mapping[WorkflowType, tuple[str, ...]]] = {
    "direct": (*_COMMON_KEYS, *_DIRECT_KEYS),
    "reverse": (*_COMMON_KEYS, *_REVERSE_KEYS),
}

DEFAULTS_KEYS: Final = (*POLICY_KEYS, *CLAUSE_KEYS.values(), "safe-rerun", "requires")

#: ``var in <collection>``, matched at the start only, as Mistral's
#: ``WITH_ITEMS_PTRN`` with ``re.match``.
_WITH_ITEMS: Final = re.compile(r"\s*([\w\-]+)\s*in\s*(\[.+\]|{{.*?}}|<%.*?%>)")


def parse_defaults(ck: Checker, data: Any, path: Path) -> TaskDefaults | None:
    """``task-defaults``: its unknown keys are errors (``additionalProperties``)."""
    if not nonempty_mapping(ck, data, path):
        return None
    ck.unknown_keys(data, DEFAULTS_KEYS, path, "task-defaults")
    policies = parse_policies(ck, data, path)
    clauses = _clauses(ck, data, path)
    safe_rerun = _flag(ck, data, "safe-rerun", path)
    requires: tuple[str, ...] = ()
    if "requires" in data:
        requires = string_or_strings(ck, data["requires"], (*path, "requires")) or ()
    return TaskDefaults(policies, clauses, safe_rerun, requires, path)


def parse_task(
    ck: Checker,
    name: str,
    data: Any,
    path: Path,
    wf_type: WorkflowType,
    defaults: TaskDefaults | None,
) -> TaskSpec | None:
    if not nonempty_mapping(ck, data, path):
        return None
    if len(name) > MAX_TASK_NAME_LENGTH:
        ck.error(
            f"The length of a '{name}' task name must not exceed {MAX_TASK_NAME_LENGTH} symbols",
            path,
        )
    _check_keys(ck, data, path, wf_type)
    action, workflow, inline = _command(ck, data, path)
    join = _join(ck, data, name, path) if wf_type == "direct" else None
    clauses = _clauses(ck, data, path) if wf_type == "direct" else {}
    requires: tuple[str, ...] = ()
    if wf_type == "reverse" and "requires" in data:
        requires = string_or_strings(ck, data["requires"], (*path, "requires")) or ()
    keep_result = _flag(ck, data, "keep-result", path)
    safe_rerun = _flag(ck, data, "safe-rerun", path)
    if safe_rerun is None and defaults is not None:
        safe_rerun = defaults.safe_rerun
    return TaskSpec(
        name=name,
        workflow_type=wf_type,
        description=_text(ck, data, "description", path),
        tags=_tags(ck, data, path),
        action=action,
        workflow=workflow,
        input=_input(ck, data, inline, path),
        with_items=_with_items(ck, data.get("with-items"), (*path, "with-items"))
        if "with-items" in data
        else (),
        publish=_mapping(ck, data, "publish", path),
        publish_on_error=_mapping(ck, data, "publish-on-error", path),
        publish_on_skip=_mapping(ck, data, "publish-on-skip", path),
        policies=merge(parse_policies(ck, data, path), defaults.policies if defaults else None),
        target=_target(ck, data, path),
        keep_result=True if keep_result is None else keep_result,
        safe_rerun=False if safe_rerun is None else safe_rerun,
        join=join,
        clauses=_effective_clauses(name, clauses, defaults),
        requires=_requires(name, requires, defaults) if wf_type == "reverse" else (),
        path=path,
    )


def _check_keys(ck: Checker, data: Mapping[str, Any], path: Path, wf_type: WorkflowType) -> None:
    allowed = TASK_KEYS[wf_type]
    other: WorkflowType = "reverse" if wf_type == "direct" else "direct"
    for key in data:
        if key in allowed:
            continue
        if key in _OVERWRITTEN:
            ck.warning(f"{key!r} is ignored: Mistral sets a task's {key} itself", (*path, key))
        elif key in TASK_KEYS[other]:
            ck.error(
                f"Additional properties are not allowed ({key!r} was unexpected): "
                f"{key!r} belongs to {other} workflows, and this one is {wf_type}",
                (*path, key),
            )
        else:
            ck.unknown_keys({key: None}, allowed, path, "a task")


def _command(
    ck: Checker, data: Mapping[str, Any], path: Path
) -> tuple[str | None, str | None, dict[str, JSON]]:
    """``action`` or ``workflow`` (not both), split into the name and its
    inline parameters; neither means ``std.noop``."""
    if "action" in data and "workflow" in data:
        ck.error(
            "a task takes 'action' or 'workflow', not both (Mistral: is not valid under "
            "any of the given schemas)",
            (*path, "workflow"),
        )
    for key in ("action", "workflow"):
        if key not in data:
            continue
        where = (*path, key)
        if not nonempty_string(ck, data[key], where):
            return None, None, {}
        command = split_command(data[key])
        if command is None:
            ck.error(f"Invalid action/workflow task property: {data[key]}", where)
            return None, None, {}
        ck.expressions(command.name, where, label=key)
        check_params(ck, command, where)
        if key == "action":
            return command.name, None, command.params
        return None, command.name, command.params
    return "std.noop", None, {}


def _input(
    ck: Checker, data: Mapping[str, Any], inline: dict[str, JSON], path: Path
) -> Mapping[str, JSON] | str:
    where = (*path, "input")
    if "input" not in data:
        return inline
    value = data["input"]
    if isinstance(value, str) and value:
        ck.expressions(value, where)
        if inline:
            ck.error(
                "inline parameters cannot be merged into an 'input' that is an "
                "expression: move them into the expression",
                where,
            )
        return value
    if not isinstance(value, dict) or not value:
        ck.error(
            f"{show(value)} is not valid under any of the given schemas: expected a "
            "non-empty mapping or an expression that gives one",
            where,
        )
        return inline
    ck.expressions(value, where)
    return _deep_merge(value, inline) if inline else value


def _deep_merge(left: Mapping[str, JSON], right: Mapping[str, JSON]) -> dict[str, JSON]:
    """Mistral's ``merge_dicts(left, right)``: ``right`` wins, mappings merge."""
    out = dict(left)
    for key, value in right.items():
        mine = out.get(key)
        if isinstance(mine, dict) and isinstance(value, dict):
            out[key] = _deep_merge(mine, value)
        else:
            out[key] = value
    return out


def _with_items(ck: Checker, value: Any, path: Path) -> tuple[WithItems, ...]:
    if isinstance(value, str):
        items, paths = [value], [path]
    elif isinstance(value, list) and unique_strings(ck, value, path):
        items, paths = value, [(*path, i) for i in range(len(value))]
    else:
        if not isinstance(value, list):
            ck.error(
                f"{show(value)} is not valid under any of the given schemas: expected "
                "'var in <% collection %>' or a list of them",
                path,
            )
        return ()
    out: list[WithItems] = []
    seen: set[str] = set()
    for item, where in zip(items, paths, strict=True):
        entry = _with_item(ck, item, where)
        if entry is None:
            continue
        if entry.var in seen:
            ck.error(f"the with-items variable {entry.var!r} is given twice", where)
        seen.add(entry.var)
        out.append(entry)
    return tuple(out)


def _with_item(ck: Checker, item: str, path: Path) -> WithItems | None:
    found = _WITH_ITEMS.match(item)
    if found is None:
        ck.error(
            "Wrong format of 'with-items' property. Please use format "
            f"'var in {{[some, list] | <% $.array %> }}': {show(item)}",
            path,
        )
        return None
    var, collection = found.group(1), found.group(2)
    if not collection.startswith("["):
        ck.expressions(collection, path)
        return WithItems(var, collection)
    try:
        literal = json.loads(collection)
    except ValueError as exc:
        ck.error(f"Invalid array in 'with-items' clause: {collection}, error: {exc}", path)
        return None
    return WithItems(var, literal)


def _join(
    ck: Checker, data: Mapping[str, Any], name: str, path: Path
) -> Literal["all"] | int | None:
    if "join" not in data:
        return None
    value, where = data["join"], (*path, "join")
    if not (value in ("all", "one") or is_count(value)):
        ck.error(
            f"{show(value)} is not valid under any of the given schemas: expected "
            "'all', 'one' or an integer from 0",
            where,
        )
        return None
    if not value:
        return None  # join: 0 is no join, as Mistral reads a falsy join
    if len(name) > MAX_JOIN_TASK_NAME_LENGTH:
        ck.error(
            f"The length of a '{name}' join task name must not exceed "
            f"{MAX_JOIN_TASK_NAME_LENGTH} symbols",
            path,
        )
    if value == "all":
        return "all"
    return 1 if value == "one" else int(value)


def _clauses(ck: Checker, data: Mapping[str, Any], path: Path) -> dict[Event, OnClause]:
    out: dict[Event, OnClause] = {}
    for event, key in CLAUSE_KEYS.items():
        if key in data:
            clause = parse_clause(ck, data[key], (*path, key))
            if clause is not None:
                out[event] = clause
    return out


def _effective_clauses(
    name: str, own: dict[Event, OnClause], defaults: TaskDefaults | None
) -> dict[Event, OnClause]:
    """A clause that names no task takes task-defaults' tasks, minus this
    task (``_remove_task_from_clause``); its own publish stays."""
    if defaults is None or not defaults.clauses:
        return own
    out = dict(own)
    for event, inherited in defaults.clauses.items():
        mine = own.get(event)
        if mine is not None and mine.next:
            continue
        found = tuple(t for t in inherited.next if t.target != name)
        if found or mine is not None:
            out[event] = OnClause(found, mine.publish if mine else None, inherited=bool(found))
    return {event: out[event] for event in CLAUSE_KEYS if event in out}


def _requires(name: str, own: tuple[str, ...], defaults: TaskDefaults | None) -> tuple[str, ...]:
    """Mistral's ``get_task_requires``: the union, without the task itself
    (kept in the order written, own first)."""
    extra = defaults.requires if defaults is not None else ()
    return tuple(dict.fromkeys(r for r in (*own, *extra) if r != name))


def _flag(ck: Checker, data: Mapping[str, Any], key: str, path: Path) -> bool | str | None:
    if key not in data or not expression_or_bool(ck, data[key], (*path, key)):
        return None
    ck.expressions(data[key], (*path, key))
    value: bool | str = data[key]
    return value


def _mapping(ck: Checker, data: Mapping[str, Any], key: str, path: Path) -> Mapping[str, JSON]:
    if key not in data or not nonempty_mapping(ck, data[key], (*path, key)):
        return {}
    ck.expressions(data[key], (*path, key))
    value: Mapping[str, JSON] = data[key]
    return value


def _target(ck: Checker, data: Mapping[str, Any], path: Path) -> str | None:
    if "target" not in data or not nonempty_string(ck, data["target"], (*path, "target")):
        return None
    ck.expressions(data["target"], (*path, "target"))
    value: str = data["target"]
    return value


def _text(ck: Checker, data: Mapping[str, Any], key: str, path: Path) -> str | None:
    if key not in data or not nonempty_string(ck, data[key], (*path, key)):
        return None
    value: str = data[key]
    return value


def _tags(ck: Checker, data: Mapping[str, Any], path: Path) -> tuple[str, ...]:
    if "tags" not in data or not unique_strings(ck, data["tags"], (*path, "tags")):
        return ()
    return tuple(data["tags"])
