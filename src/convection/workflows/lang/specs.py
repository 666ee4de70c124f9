"""The parsed language: frozen, typed specifications.

A spec is what the engine reads, so it holds each value in the one form
the engine needs, with Mistral's defaults and merges already applied:
inline ``key=value`` parameters merged into ``input``, task-defaults
merged into each task as Mistral merges them (see :class:`TaskSpec`),
``join: one`` read as 1. Values that are expressions stay strings; the
engine evaluates them.

Mappings are the loaded document's own data, shared and not copied (a
workflow's values can be large): nothing may mutate them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from convection.common import JSON, Path

WorkflowType = Literal["direct", "reverse"]

#: A transition's event: which ``on-*`` clause it was written in.
Event = Literal["success", "error", "complete", "skip"]

#: Task states whose completion publishes (Mistral's ``get_publish``).
PublishState = Literal["SUCCESS", "ERROR", "SKIPPED"]

#: Mistral's engine commands (mistral/lang/v2/workflows.py ENGINE_COMMANDS).
ENGINE_COMMANDS: Final = frozenset({"noop", "fail", "succeed", "pause"})

#: The ``on-*`` keys in the order Mistral evaluates them.
CLAUSE_KEYS: Final[Mapping[Event, str]] = {
    "error": "on-error",
    "skip": "on-skip",
    "success": "on-success",
    "complete": "on-complete",
}


_STATE_EVENT: Final[Mapping[PublishState, Event]] = {
    "SUCCESS": "success",
    "ERROR": "error",
    "SKIPPED": "skip",
}


class _Required:
    """The marker of an input without a default (Mistral's ``NotDefined``)."""

    _instance: _Required | None = None

    def __new__(cls) -> _Required:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "REQUIRED"

    def __reduce__(self) -> str:
        return "REQUIRED"


#: The default of a declared input that has none: the caller must give it.
REQUIRED: Final = _Required()


@dataclass(frozen=True, slots=True)
class Transition:
    """One entry of an ``on-*`` clause, normalised as Mistral does:
    ``t2``, ``t2: <% guard %>``, ``fail msg="x"`` all become a target, an
    optional guard and parameters (only engine commands use them)."""

    target: str
    condition: str | None = None
    params: Mapping[str, JSON] = field(default_factory=dict)
    #: Where the entry is written: in the task or in task-defaults.
    path: Path = ()

    @property
    def is_command(self) -> bool:
        """An engine command wins over a task of the same name, as at
        Mistral's HEAD (``create_command`` looks commands up first)."""
        return self.target in ENGINE_COMMANDS


@dataclass(frozen=True, slots=True)
class Publish:
    """What a completed task publishes: ``branch`` values travel with the
    branch, ``global`` values go to the workflow context. ``atomic`` is
    accepted and kept, but not applied: Mistral's own publisher leaves it
    unimplemented, and docs/workflows.md says so."""

    branch: Mapping[str, JSON] = field(default_factory=dict)
    global_: Mapping[str, JSON] = field(default_factory=dict)
    atomic: Mapping[str, JSON] = field(default_factory=dict)

    def over(self, lower: Publish | None) -> Publish:
        """This publish with ``lower`` underneath: each section's keys from
        here win, the others come from ``lower``."""
        if lower is None:
            return self
        return Publish(
            {**lower.branch, **self.branch},
            {**lower.global_, **self.global_},
            {**lower.atomic, **self.atomic},
        )


@dataclass(frozen=True, slots=True)
class OnClause:
    """A task's ``on-success``/``on-error``/``on-complete``/``on-skip``.

    ``next`` is effective: when the task's own clause names no task, the
    task-defaults clause is used with the task itself removed, as
    Mistral's ``get_on_*_clause`` does (``inherited`` says so). ``publish``
    is always the task's own: Mistral never publishes from task-defaults.
    """

    next: tuple[Transition, ...] = ()
    publish: Publish | None = None
    inherited: bool = False


@dataclass(frozen=True, slots=True)
class Retry:
    """``retry``: ``count`` extra runs (the first run is not a retry),
    ``delay`` seconds apart; each may be an expression."""

    count: int | str
    delay: int | str
    break_on: str | None = None
    continue_on: str | None = None


@dataclass(frozen=True, slots=True)
class Policies:
    """A task's policies, each a value or an expression string.

    The defaults are Mistral's ``PoliciesSpec`` defaults, and a policy at
    its default does not apply (``wait-before: 0`` waits for nothing).
    """

    retry: Retry | None = None
    wait_before: int | str = 0
    wait_after: int | str = 0
    timeout: int | str = 0
    pause_before: bool | str = False
    concurrency: int | str = 0
    fail_on: bool | str = False


@dataclass(frozen=True, slots=True)
class WithItems:
    """One ``var in collection`` of ``with-items``: the collection is a
    literal list or an expression to evaluate. Several are zipped."""

    var: str
    collection: list[JSON] | str


@dataclass(frozen=True, slots=True)
class TaskDefaults:
    """``task-defaults`` as written (each task's spec holds the merge)."""

    policies: Policies = Policies()
    clauses: Mapping[Event, OnClause] = field(default_factory=dict)
    safe_rerun: bool | str | None = None
    requires: tuple[str, ...] = ()
    path: Path = ()


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One task, with task-defaults merged in as Mistral merges them:

    * a policy comes from the task unless the task's value would not
      apply (absent, 0, false), then from task-defaults
      (``construct_policies_list``, mistral/engine/policies.py);
    * ``safe-rerun`` from the task unless absent, then from task-defaults;
    * each ``on-*`` clause's tasks from the task unless it names none,
      then from task-defaults without the task itself;
    * ``requires`` is the task's union task-defaults', without the task.
    """

    name: str
    workflow_type: WorkflowType
    description: str | None = None
    tags: tuple[str, ...] = ()
    #: The action to run; ``std.noop`` when neither action nor workflow is
    #: given, None for a sub-workflow task. May be an expression.
    action: str | None = "std.noop"
    workflow: str | None = None
    #: Inline parameters merged into ``input``, the inline ones winning
    #: (Mistral's ``merge_dicts(input, params)``). A string is an
    #: expression that must evaluate to a mapping.
    input: Mapping[str, JSON] | str = field(default_factory=dict)
    with_items: tuple[WithItems, ...] = ()
    publish: Mapping[str, JSON] = field(default_factory=dict)
    publish_on_error: Mapping[str, JSON] = field(default_factory=dict)
    publish_on_skip: Mapping[str, JSON] = field(default_factory=dict)
    policies: Policies = Policies()
    target: str | None = None
    keep_result: bool | str = True
    safe_rerun: bool | str = False
    #: ``"all"`` or a count (``one`` is 1); None without a join.
    join: Literal["all"] | int | None = None
    clauses: Mapping[Event, OnClause] = field(default_factory=dict)
    requires: tuple[str, ...] = ()
    path: Path = ()

    @property
    def type(self) -> Literal["ACTION", "WORKFLOW"]:
        """The type of its executions, as Mistral's ``get_type``."""
        return "WORKFLOW" if self.workflow is not None else "ACTION"

    def clause(self, event: Event) -> OnClause | None:
        return self.clauses.get(event)

    def next(self, event: Event) -> tuple[Transition, ...]:
        found = self.clauses.get(event)
        return found.next if found is not None else ()

    def transitions(self) -> Iterator[tuple[Event, Transition]]:
        """Every effective transition, clause by clause."""
        for event, clause in self.clauses.items():
            for transition in clause.next:
                yield event, transition

    def publish_for(self, state: PublishState) -> Publish | None:
        """What the task publishes on ``state``: the plain ``publish*`` key
        as a branch publish, under ``on-complete``'s, under the state's own
        clause's, which wins (Mistral's ``DirectWorkflowTaskSpec.get_publish``)."""
        plain = {
            "SUCCESS": self.publish,
            "ERROR": self.publish_on_error,
            "SKIPPED": self.publish_on_skip,
        }[state]
        merged = Publish(branch=plain) if plain else None
        layers: tuple[Event, ...] = ("complete", _STATE_EVENT[state])
        for layer in layers:
            clause = self.clauses.get(layer)
            if clause is not None and clause.publish is not None:
                merged = clause.publish.over(merged)
        return merged


@dataclass(frozen=True, slots=True)
class WorkflowSpec:
    """One workflow. ``input`` maps each declared name to its default, or
    to :data:`REQUIRED`. ``namespace`` is not part of the language: the
    caller stores the spec under the namespace it was given."""

    name: str
    type: WorkflowType = "direct"
    description: str | None = None
    tags: tuple[str, ...] = ()
    input: Mapping[str, JSON] = field(default_factory=dict)
    output: Mapping[str, JSON] = field(default_factory=dict)
    output_on_error: Mapping[str, JSON] = field(default_factory=dict)
    vars: Mapping[str, JSON] = field(default_factory=dict)
    task_defaults: TaskDefaults | None = None
    tasks: Mapping[str, TaskSpec] = field(default_factory=dict)
    #: The workbook that defines it, if any.
    workbook: str | None = None
    path: Path = ()

    @property
    def qualified_name(self) -> str:
        """The stored name: ``<workbook>.<name>`` inside a workbook."""
        return f"{self.workbook}.{self.name}" if self.workbook else self.name


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """An ad-hoc action: ``base`` run with ``base_input`` (inline
    parameters of ``base`` merged in, winning), its own declared
    ``input``, and ``output`` evaluated over the base action's result."""

    name: str
    base: str
    base_input: Mapping[str, JSON] = field(default_factory=dict)
    input: Mapping[str, JSON] = field(default_factory=dict)
    output: JSON = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    workbook: str | None = None
    path: Path = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.workbook}.{self.name}" if self.workbook else self.name


@dataclass(frozen=True, slots=True)
class WorkbookSpec:
    """A workbook: its workflows and actions carry its name, and are
    stored as ``<workbook>.<name>``."""

    name: str
    description: str | None = None
    tags: tuple[str, ...] = ()
    workflows: tuple[WorkflowSpec, ...] = ()
    actions: tuple[ActionSpec, ...] = ()


def lookup_order(name: str, workbook: str | None) -> tuple[str, ...]:
    """The names to try, in order, for a workflow or action named inside a
    workbook's workflow: ``<workbook>.<name>`` first, then ``name``
    (Mistral's ``resolve_workflow_definition`` and ``_get_action_descriptor``)."""
    return (f"{workbook}.{name}", name) if workbook else (name,)
