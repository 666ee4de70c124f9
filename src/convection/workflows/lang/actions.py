"""Ad-hoc actions (mistral/lang/v2/actions.py, mistral/actions/adhoc.py).

An ad-hoc action runs its ``base`` (an action, perhaps another ad-hoc
one) with ``base-input``; inline parameters of ``base`` are merged into
``base-input`` and win, as ``merge_dicts(base_input, params)`` makes them.
Unlike a workflow's, its unknown keys are errors.

Mistral finds a cycle in a chain only when the action runs (``Found a
cycle in an ad-hoc action chain``); here a document whose own actions
form one is refused at upload, with that message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from convection.common import Diagnostic, InvalidInput, Path
from convection.workflows.lang._check import (
    Checker,
    nonempty_mapping,
    nonempty_string,
    unique_strings,
)
from convection.workflows.lang._inputs import declared_inputs
from convection.workflows.lang.inline import check_params, split_command
from convection.workflows.lang.limits import MAX_NAME_LENGTH
from convection.workflows.lang.specs import ActionSpec, lookup_order

ACTION_KEYS: Final = ("base", "base-input", "input", "output", "description", "tags")


def parse_action(
    ck: Checker, name: str, data: Any, path: Path, workbook: str | None = None
) -> ActionSpec | None:
    before = len(ck.diags.errors)
    if not name or len(name) > MAX_NAME_LENGTH:
        ck.error(f"an action name must have 1 to {MAX_NAME_LENGTH} characters", path)
        return None
    if not nonempty_mapping(ck, data, path):
        return None
    ck.unknown_keys(
        {k: v for k, v in data.items() if k not in ("name", "version")},
        ACTION_KEYS,
        path,
        "an ad-hoc action",
    )
    if "base" not in data:
        ck.error("'base' is a required property", path)
        return None
    base, params = _base(ck, data["base"], (*path, "base"))
    base_input: dict[str, Any] = {}
    if "base-input" in data and nonempty_mapping(ck, data["base-input"], (*path, "base-input")):
        ck.expressions(data["base-input"], (*path, "base-input"))
        base_input = {**data["base-input"], **params}
    else:
        base_input = params
    spec = ActionSpec(
        name=name,
        base=base or "",
        base_input=base_input,
        input=declared_inputs(ck, data["input"], (*path, "input")) if "input" in data else {},
        output=data.get("output"),
        description=_description(ck, data, path),
        tags=tuple(data["tags"])
        if "tags" in data and unique_strings(ck, data["tags"], (*path, "tags"))
        else (),
        workbook=workbook,
        path=path,
    )
    if "output" in data:
        ck.expressions(data["output"], (*path, "output"))
    return spec if len(ck.diags.errors) == before else None


def _base(ck: Checker, value: Any, path: Path) -> tuple[str | None, dict[str, Any]]:
    if not nonempty_string(ck, value, path):
        return None, {}
    command = split_command(value)
    if command is None:
        ck.error(f"Invalid action/workflow task property: {value}", path)
        return None, {}
    ck.expressions(command.name, path, label="base")
    check_params(ck, command, path)
    return command.name, command.params


def _description(ck: Checker, data: Mapping[str, Any], path: Path) -> str | None:
    if "description" in data and nonempty_string(ck, data["description"], (*path, "description")):
        value: str = data["description"]
        return value
    return None


def check_chains(ck: Checker, actions: list[ActionSpec]) -> None:
    """Refuse each action whose chain of bases, through the actions given
    here, comes back to an action already in it (O(n): each action's
    chain is walked once, later walks stop at an action already judged)."""
    by_name = {a.qualified_name: a for a in actions}
    judged: dict[str, str | None] = {}  # name -> the repeated name, if its chain loops
    for action in actions:
        repeated = _walk(action, by_name, judged)
        if repeated is not None:
            ck.error(
                "Found a cycle in an ad-hoc action chain "
                f"[action_name={action.qualified_name}, duplicate_action_name={repeated}]",
                (*action.path, "base"),
            )


def _walk(
    action: ActionSpec, by_name: Mapping[str, ActionSpec], judged: dict[str, str | None]
) -> str | None:
    chain: list[str] = []
    on_chain: set[str] = set()
    current: ActionSpec | None = action
    verdict: str | None = None
    while current is not None:
        name = current.qualified_name
        if name in judged:
            verdict = judged[name]
            break
        if name in on_chain:
            verdict = name
            break
        chain.append(name)
        on_chain.add(name)
        current = _base_of(current, by_name)
    for name in chain:
        judged[name] = verdict
    return verdict


def _base_of(action: ActionSpec, by_name: Mapping[str, ActionSpec]) -> ActionSpec | None:
    for candidate in lookup_order(action.base, action.workbook):
        if candidate in by_name:
            return by_name[candidate]
    return None


def action_chain(
    action: ActionSpec, known: Mapping[str, ActionSpec]
) -> tuple[tuple[ActionSpec, ...], str]:
    """The ad-hoc actions from ``action`` inwards, and the name of the
    action that finally runs, looking bases up in ``known`` (qualified
    names) as Mistral's ``_visit_hierarchy`` does. Output transformers run
    in the reverse order of the chain.

    Raises :class:`InvalidInput` with Mistral's message on a cycle.
    """
    chain = [action]
    visited = {action.qualified_name}
    while True:
        base = next(
            (known[n] for n in lookup_order(chain[-1].base, chain[-1].workbook) if n in known),
            None,
        )
        if base is None:
            return tuple(chain), chain[-1].base
        if base.qualified_name in visited:
            message = (
                "Found a cycle in an ad-hoc action chain "
                f"[action_name={action.qualified_name}, "
                f"duplicate_action_name={base.qualified_name}]"
            )
            raise InvalidInput([Diagnostic(message, (*action.path, "base"))])
        visited.add(base.qualified_name)
        chain.append(base)
