"""Workflows: their keys, their tasks, and the checks Mistral makes once
all tasks are known (mistral/lang/v2/workflows.py ``validate_semantics``).

Unknown workflow keys are not errors, because they are not in Mistral
either: its ``additionalProperties: False`` sits in a meta-schema of which
``get_schema`` merges only the properties. They are warned about here.

Direct workflows: every transition names a task or an engine command; at
least one task has no inbound transition; a ``join`` has enough inbound
tasks. Reverse workflows: every ``requires`` names a task, and (unlike
Mistral, where such a workflow only hangs when run) the dependencies
have no cycle.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from convection.common import Path, suggest
from convection.workflows.lang._check import (
    Checker,
    nonempty_mapping,
    nonempty_string,
    show,
    unique_strings,
)
from convection.workflows.lang._inputs import declared_inputs
from convection.workflows.lang.limits import MAX_NAME_LENGTH, MAX_TASKS_PER_WORKFLOW
from convection.workflows.lang.specs import (
    ENGINE_COMMANDS,
    TaskDefaults,
    TaskSpec,
    Transition,
    WorkflowSpec,
    WorkflowType,
)
from convection.workflows.lang.tasks import parse_defaults, parse_task

WORKFLOW_KEYS: Final = (
    "type",
    "description",
    "tags",
    "input",
    "output",
    "output-on-error",
    "vars",
    "task-defaults",
    "tasks",
)


def parse_workflow(
    ck: Checker, name: str, data: Any, path: Path, workbook: str | None = None
) -> WorkflowSpec | None:
    """One workflow, or None when it has errors (they are in ``ck``)."""
    before = len(ck.diags.errors)
    if not _name_ok(ck, name, path) or not nonempty_mapping(ck, data, path):
        return None
    for key in data:
        if key not in WORKFLOW_KEYS and key not in ("name", "version"):
            ck.warning(
                f"{key!r} is not a workflow key and is ignored, as Mistral ignores it"
                f"{suggest(key, WORKFLOW_KEYS)}",
                (*path, key),
            )
    wf_type = _type(ck, data, path)
    if wf_type is None:
        return None
    fields = _fields(ck, data, path)
    defaults = None
    if "task-defaults" in data:
        defaults = parse_defaults(ck, data["task-defaults"], (*path, "task-defaults"))
    tasks = _tasks(ck, data, path, wf_type, defaults)
    if tasks is None:
        return None
    spec = WorkflowSpec(
        name=name,
        type=wf_type,
        task_defaults=defaults,
        tasks=tasks,
        workbook=workbook,
        path=path,
        **fields,
    )
    # A task that could not be read is still a name transitions may use;
    # counting inbound transitions without it would only mislead.
    names = set(data["tasks"])
    whole = len(tasks) == len(names)
    if wf_type == "direct":
        _check_direct(ck, spec, names, whole=whole)
    else:
        _check_reverse(ck, spec, names, whole=whole)
    return spec if len(ck.diags.errors) == before else None


def _name_ok(ck: Checker, name: str, path: Path) -> bool:
    if not name:
        ck.error("'' is too short: a workflow needs a name", path)
        return False
    if len(name) > MAX_NAME_LENGTH:
        ck.error(f"a workflow name must not exceed {MAX_NAME_LENGTH} characters", path)
        return False
    if looks_like_uuid(name):
        ck.error("Workflow name cannot be in the format of UUID.", path)
        return False
    return True


def looks_like_uuid(name: str) -> bool:
    """oslo's ``is_uuid_like``: what ``uuid.UUID`` reads back as the same
    hex digits, dashes, braces and a ``urn:uuid:`` prefix aside."""
    try:
        parsed = uuid.UUID(name)
    except ValueError:
        return False
    bare = name.lower().removeprefix("urn:").removeprefix("uuid:")
    bare = bare.replace("-", "").strip("{}")
    return parsed.hex == bare


def _type(ck: Checker, data: Mapping[str, Any], path: Path) -> WorkflowType | None:
    value = data.get("type", "direct")
    if value == "direct":
        return "direct"
    if value == "reverse":
        return "reverse"
    ck.error(f"{show(value)} is not one of ['reverse', 'direct']", (*path, "type"))
    return None


def _fields(ck: Checker, data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The workflow's values besides its tasks, each as its schema wants."""
    out: dict[str, Any] = {}
    if "description" in data and nonempty_string(ck, data["description"], (*path, "description")):
        out["description"] = data["description"]
    if "tags" in data and unique_strings(ck, data["tags"], (*path, "tags")):
        out["tags"] = tuple(data["tags"])
    if "input" in data:
        out["input"] = declared_inputs(ck, data["input"], (*path, "input"))
    for key in ("output", "output-on-error", "vars"):
        if key in data and nonempty_mapping(ck, data[key], (*path, key)):
            ck.expressions(data[key], (*path, key))
            out[key.replace("-", "_")] = data[key]
    return out


def _tasks(
    ck: Checker,
    data: Mapping[str, Any],
    path: Path,
    wf_type: WorkflowType,
    defaults: TaskDefaults | None,
) -> dict[str, TaskSpec] | None:
    where = (*path, "tasks")
    if "tasks" not in data:
        ck.error("'tasks' is a required property", path)
        return None
    raw = data["tasks"]
    if not isinstance(raw, dict) or not raw:
        ck.error(
            f"Workflow doesn't have any tasks: {show(raw)} is not a non-empty mapping of "
            "task names to tasks",
            where,
        )
        return None
    if len(raw) > MAX_TASKS_PER_WORKFLOW:
        ck.error(
            f"the workflow has {len(raw)} tasks, more than the limit of "
            f"{MAX_TASKS_PER_WORKFLOW} (MAX_TASKS_PER_WORKFLOW)",
            where,
        )
        return None
    tasks: dict[str, TaskSpec] = {}
    for name, body in raw.items():
        task = parse_task(ck, name, body, (*where, name), wf_type, defaults)
        if task is not None:
            tasks[name] = task
    return tasks


def _defaults_transitions(spec: WorkflowSpec) -> Iterator[Transition]:
    if spec.task_defaults is not None:
        for clause in spec.task_defaults.clauses.values():
            yield from clause.next


def _own_transitions(task: TaskSpec) -> Iterator[Transition]:
    for clause in task.clauses.values():
        if not clause.inherited:
            yield from clause.next


def _check_direct(ck: Checker, spec: WorkflowSpec, names: set[str], *, whole: bool) -> None:
    """Mistral's ``DirectWorkflowSpec.validate_semantics``: start tasks,
    then links, then joins; here all of them, every problem reported."""
    tasks = spec.tasks
    for transition in _defaults_transitions(spec):
        _check_link(ck, transition, names)
    for task in tasks.values():
        for transition in _own_transitions(task):
            _check_link(ck, transition, names)
        if task.name in ENGINE_COMMANDS:
            ck.warning(
                f"a task named {task.name!r} is never run by a transition: the engine "
                f"command {task.name!r} wins (name it otherwise)",
                task.path,
            )
    if not whole:
        return
    inbound = inbound_counts(spec)
    if not any(inbound[name] == 0 for name in tasks):
        ck.error(
            "Failed to find start tasks in direct workflow. There must be at least one "
            f"task without inbound transition.[workflow_name={spec.name}]",
            (*spec.path, "tasks"),
        )
    for task in tasks.values():
        _check_join(ck, task, inbound[task.name])


def _check_link(ck: Checker, transition: Transition, names: set[str]) -> None:
    target = transition.target
    if target in names or target in ENGINE_COMMANDS:
        return
    hint = did_you_mean(target, sorted(names))
    if not hint and "(" in target:
        hint = (
            " Mistral splits 'name(key=value)' only when it holds a space: write 'name key=value'."
        )
    ck.error(
        f"Task '{target}' not found.{hint} A transition names a task of this workflow "
        "or an engine command (fail, succeed, pause, noop).",
        transition.path,
    )


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` Did you mean x?`` as a sentence of its own, or nothing."""
    hint = suggest(name, known)
    return f" D{hint[3:]}" if hint else ""


def inbound_counts(spec: WorkflowSpec) -> dict[str, int]:
    """How many tasks transition to each task, by name as Mistral's
    ``find_inbound_task_specs`` counts (a task counts once)."""
    counts = dict.fromkeys(spec.tasks, 0)
    for task in spec.tasks.values():
        for target in {t.target for _, t in task.transitions()}:
            if target in counts:
                counts[target] += 1
    return counts


def _check_join(ck: Checker, task: TaskSpec, inbound: int) -> None:
    if task.join is None:
        return
    where = (*task.path, "join")
    if task.join == "all":
        if inbound == 0:
            ck.error(f"No inbound tasks for task with 'join: all' [task_name={task.name}]", where)
    elif inbound < task.join:
        ck.error(
            "Not enough inbound tasks for task with 'join' "
            f"[task_name={task.name}, join={task.join}, inbound_tasks={inbound}]",
            where,
        )


def _check_reverse(ck: Checker, spec: WorkflowSpec, names: set[str], *, whole: bool) -> None:
    tasks = spec.tasks
    defaults = spec.task_defaults
    if defaults is not None:
        for name in defaults.requires:
            _check_required(ck, name, names, (*defaults.path, "requires"))
    from_defaults = set(defaults.requires) if defaults is not None else set()
    for task in tasks.values():
        for name in task.requires:
            if name not in from_defaults:
                _check_required(ck, name, names, (*task.path, "requires"))
    if not whole:
        return
    for cycle in requires_cycles(spec):
        ck.error(
            f"the tasks {' -> '.join(cycle)} require each other in a cycle, so none of "
            "them can ever run; a reverse workflow's 'requires' must not loop",
            (*tasks[cycle[0]].path, "requires"),
        )


def _check_required(ck: Checker, name: str, names: set[str], path: Path) -> None:
    if name not in names:
        ck.error(
            f"Task '{name}' not found.{did_you_mean(name, sorted(names))} 'requires' names "
            "tasks of this workflow (engine commands are not tasks).",
            path,
        )


def requires_cycles(spec: WorkflowSpec) -> list[list[str]]:
    """One cycle through each strongly connected group of a reverse
    workflow's ``requires`` (Tarjan's algorithm, iterative: O(V+E))."""
    tasks = spec.tasks
    edges = {name: [r for r in t.requires if r in tasks] for name, t in tasks.items()}
    order = {name: i for i, name in enumerate(tasks)}
    groups = [g for g in _strong_groups(edges) if len(g) > 1]
    cycles = [_cycle_in(min(g, key=order.__getitem__), set(g), edges) for g in groups]
    return sorted(cycles, key=lambda cycle: order[cycle[0]])


def _strong_groups(edges: Mapping[str, list[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            children = edges[node]
            if i < len(children):
                work.append((node, i + 1))
                child = children[i]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(group)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return groups


def _cycle_in(start: str, members: set[str], edges: Mapping[str, list[str]]) -> list[str]:
    """The shortest cycle through ``start`` inside its strongly connected
    group (breadth first), for the message."""
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in edges[node]:
            if child == start:
                chain = [node]
                while chain[-1] != start:
                    chain.append(parent[chain[-1]])
                return [*reversed(chain), start]
            if child in members and child not in parent:
                parent[child] = node
                queue.append(child)
    return [start, start]  # not reached: every member of a group reaches the others
