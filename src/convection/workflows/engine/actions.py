"""Finding the action a task names, and running it with its input.

A name is looked up as Mistral does: an ad-hoc action of the execution's
project (``<workbook>.<name>`` first inside a workbook), then the action
registry. An ad-hoc action runs its base (itself possibly ad-hoc) with
``base-input`` evaluated over its own input, and its ``output`` evaluated
over the base's result, innermost first (``mistral/actions/adhoc.py``).
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from convection.common import Diagnostics, InvalidInput
from convection.store import Store
from convection.workflows.actions import (
    ActionContext,
    ActionPlugin,
    ActionRegistry,
    Failure,
    Outcome,
    Success,
    UnknownAction,
    arguments,
    validate_input,
)
from convection.workflows.engine.data import EXPRESSION_LIMITS
from convection.workflows.lang import (
    REQUIRED,
    ActionSpec,
    EvaluationError,
    evaluate,
    lookup_order,
    parse_actions,
)

#: Ad-hoc actions over ad-hoc actions, at most this deep.
MAX_CHAIN = 10


@dataclass(frozen=True, slots=True)
class Resolved:
    """The system action that runs, under the ad-hoc layers (outermost
    first) that shape its input and output."""

    plugin: type[ActionPlugin]
    layers: tuple[ActionSpec, ...] = ()

    @property
    def name(self) -> str:
        return self.layers[0].qualified_name if self.layers else self.plugin.name

    @property
    def safe_to_rerun(self) -> bool:
        return self.plugin.safe_to_rerun


class ActionError(Exception):
    """The action cannot run: unknown, or its input is invalid (Mistral
    force-fails the task with this message)."""


def resolve(
    store: Store, registry: ActionRegistry, project: str, name: str, workbook: str | None,
    namespace: str,
) -> Resolved:  # fmt: skip
    layers: list[ActionSpec] = []
    current, book = name, workbook
    for _ in range(MAX_CHAIN):
        # A system action's name cannot be taken by an ad-hoc one
        # (definitions refuses it), so the registry is asked first.
        plugin = registry.get(current)
        if plugin is not None:
            return Resolved(plugin, tuple(layers))
        spec = _adhoc(store, project, current, book, namespace)
        if spec is None:
            raise ActionError(str(UnknownAction(current, registry.names())))
        layers.append(spec)
        current, book = spec.base, spec.workbook
    raise ActionError(f"Ad-hoc action chain of {name} is deeper than {MAX_CHAIN}")


def _adhoc(
    store: Store, project: str, name: str, workbook: str | None, namespace: str
) -> ActionSpec | None:
    for candidate in lookup_order(name, workbook):
        record = store.workflows.get_adhoc_action(project, candidate, namespace)
        if record is None:
            continue
        specs, _diags = parse_actions(record.definition, candidate)
        short = candidate.rsplit(".", 1)[-1]
        for spec in specs:
            if spec.qualified_name in (candidate, short) or spec.name in (candidate, short):
                return spec
    return None


def base_input(
    resolved: Resolved, given: Mapping[str, Any], context: Mapping[str, Any]
) -> dict[str, Any]:
    """The system action's input: each ad-hoc layer's ``base-input``
    evaluated over that layer's input (defaults filled), outermost first."""
    params: Mapping[str, Any] = given
    for layer in resolved.layers:
        missing = [k for k, v in layer.input.items() if v is REQUIRED and k not in params]
        unexpected = [k for k in params if k not in layer.input]
        if missing or unexpected:
            raise ActionError(
                f"Invalid input [name={layer.qualified_name}, class=AdHocAction"
                + (f", missing={missing}" if missing else "")
                + (f", unexpected={unexpected}" if unexpected else "")
                + "]"
            )
        own = {k: v for k, v in layer.input.items() if v is not REQUIRED}
        own.update(params)
        try:
            params = evaluate(
                dict(layer.base_input), ChainMap(own, dict(context)), limits=EXPRESSION_LIMITS
            )
        except EvaluationError as exc:
            raise ActionError(exc.message) from exc
    return dict(params)


def checked(resolved: Resolved, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with the plugin's defaults, or :class:`ActionError` with
    Mistral's ``Invalid input`` message."""
    diags: Diagnostics = validate_input(resolved.plugin, params)
    if diags.errors:
        raise ActionError("; ".join(d.message for d in diags.errors))
    return arguments(resolved.plugin, params)


def shaped(resolved: Resolved, outcome: Outcome) -> Outcome:
    """A success's result through the ad-hoc layers' ``output``, innermost first."""
    if not isinstance(outcome, Success) or not resolved.layers:
        return outcome
    data = outcome.data
    for layer in reversed(resolved.layers):
        if layer.output is None:
            continue
        try:
            over = data if isinstance(data, Mapping) else {"_": data}
            data = evaluate(layer.output, over, limits=EXPRESSION_LIMITS)
        except EvaluationError as exc:
            return Failure(exc.message)
    return Success(data)


async def start(resolved: Resolved, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
    """Run the action once; an exception it raises is Mistral's failure."""
    plugin = resolved.plugin()
    try:
        return shaped(resolved, await plugin.run(ctx, params))
    except InvalidInput as exc:
        return Failure(str(exc))
    except Exception as exc:  # an action's bug is its failure, never the engine's
        return Failure(raised(resolved, ctx, exc))


async def resume(
    resolved: Resolved, ctx: ActionContext, params: Mapping[str, Any], state: Mapping[str, Any]
) -> Outcome:
    plugin = resolved.plugin()
    try:
        return shaped(resolved, await plugin.resume(ctx, params, state))
    except Exception as exc:
        return Failure(raised(resolved, ctx, exc))


def raised(resolved: Resolved, ctx: ActionContext, exc: Exception) -> str:
    """Mistral's executor message for an action that raised."""
    return (
        f"The action raised an exception [action={resolved.name}, "
        f"action_ex_id={ctx.action_execution_id}, msg='{exc}']"
    )
