"""Convection's own actions: workflows that drive the declarative layer.

``convection.stack.create``, ``update`` and ``delete`` start the operation
through the service layer and then wait for it on a timer (:class:`Sleep`
every ``poll_interval`` seconds, then ``resume`` reads the stack): a task
waiting for a stack holds no worker, and the wait survives an engine
restart because its state (the stack's id and the operation) is on the
timer row. Their result is the stack's outputs (``{key: value}``); delete's
is null. An operation that ends ``*_FAILED`` fails the action with the
stack's status and reason. ``show`` and ``outputs`` read at once.

``convection.signal`` signals a resource (a wait condition handle, a
software deployment, a scaling policy) as Heat's ``resource signal`` does.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from convection.common import ConvectionError
from convection.workflows.actions.base import (
    ActionContext,
    ActionPlugin,
    Failure,
    InputParam,
    Outcome,
    SignalOps,
    Sleep,
    StackOps,
    Success,
    arguments,
)

DEFAULT_POLL: Final = 2.0
NO_SERVICE: Final = "{action}: no stack service is attached to this engine"

_NAME = InputParam("string", required=True, description="The stack's name or id.")
_POLL = InputParam("number", default=DEFAULT_POLL, description="Seconds between checks.")
_PARAMS = InputParam("object", default={}, description="Template parameters.")
_ENV = InputParam(("string", "null"), description="An environment file's text.")
_FILES = InputParam("object", default={}, description="get_file contents by name.")


def _stacks(action: ActionPlugin, ctx: ActionContext) -> StackOps:
    if ctx.stacks is None:
        raise ConvectionError(NO_SERVICE.format(action=action.name))
    return ctx.stacks


class _StackWait(ActionPlugin, abc.ABC):
    """Start an operation, then poll the stack until it is no longer in progress."""

    operation: ClassVar[str]

    @abc.abstractmethod
    async def start(self, ops: StackOps, ctx: ActionContext, args: Mapping[str, Any]) -> str:
        """Begin the operation; the stack's id, which ``resume`` polls."""

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        args = arguments(self, params)
        try:
            stack_id = await self.start(_stacks(self, ctx), ctx, args)
        except ConvectionError as exc:
            return Failure(str(exc))
        return Sleep(float(args["poll_interval"]), {"stack_id": stack_id})

    async def resume(
        self, ctx: ActionContext, params: Mapping[str, Any], state: Mapping[str, Any]
    ) -> Outcome:
        args = arguments(self, params)
        ops = _stacks(self, ctx)
        stack = await ops.show(ctx.project, str(state["stack_id"]))
        if stack is None:
            return self.gone(args)
        status = str(stack["stack_status"])
        if status.endswith("_IN_PROGRESS"):
            return Sleep(float(args["poll_interval"]), state)
        if status.endswith("_FAILED"):
            reason = stack.get("stack_status_reason") or ""
            return Failure(f"Stack {stack['stack_name']} {status}: {reason}")
        return await self.done(ops, ctx, stack)

    def gone(self, args: Mapping[str, Any]) -> Outcome:
        return Failure(f"The Stack ({args['name']}) could not be found.")

    async def done(self, ops: StackOps, ctx: ActionContext, stack: Mapping[str, Any]) -> Outcome:
        return Success(await ops.outputs(ctx.project, str(stack["id"])))


class StackCreate(_StackWait):
    name: ClassVar[str] = "convection.stack.create"
    description: ClassVar[str] = "Creates a stack and waits for it; the result is its outputs."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "name": InputParam("string", required=True, description="The new stack's name."),
        "template": InputParam("string", required=True, description="The template's text."),
        "parameters": _PARAMS,
        "environment": _ENV,
        "files": _FILES,
        "timeout": InputParam(("integer", "null"), description="Minutes (Heat's timeout_mins)."),
        "poll_interval": _POLL,
    }

    async def start(self, ops: StackOps, ctx: ActionContext, args: Mapping[str, Any]) -> str:
        return await ops.create(
            ctx.project,
            args["name"],
            args["template"],
            args["parameters"],
            args["environment"],
            args["files"],
            args["timeout"],
        )


class StackUpdate(_StackWait):
    name: ClassVar[str] = "convection.stack.update"
    description: ClassVar[str] = (
        "Updates a stack (what is not given is kept) and waits; the result is its outputs."
    )
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "name": _NAME,
        "template": InputParam(("string", "null"), description="A new template's text."),
        "parameters": _PARAMS,
        "environment": _ENV,
        "files": _FILES,
        "poll_interval": _POLL,
    }

    async def start(self, ops: StackOps, ctx: ActionContext, args: Mapping[str, Any]) -> str:
        return await ops.update(
            ctx.project,
            args["name"],
            args["template"],
            args["parameters"],
            args["environment"],
            args["files"],
        )


class StackDelete(_StackWait):
    name: ClassVar[str] = "convection.stack.delete"
    description: ClassVar[str] = "Deletes a stack and waits until it is gone."
    input_schema: ClassVar[Mapping[str, InputParam]] = {"name": _NAME, "poll_interval": _POLL}
    safe_to_rerun: ClassVar[bool] = True

    async def start(self, ops: StackOps, ctx: ActionContext, args: Mapping[str, Any]) -> str:
        stack = await ops.show(ctx.project, args["name"])
        if stack is None:
            raise ConvectionError(f"The Stack ({args['name']}) could not be found.")
        await ops.delete(ctx.project, args["name"])
        return str(stack["id"])

    def gone(self, args: Mapping[str, Any]) -> Outcome:
        return Success(None)

    async def done(self, ops: StackOps, ctx: ActionContext, stack: Mapping[str, Any]) -> Outcome:
        return Success(None)


class StackShow(ActionPlugin):
    name: ClassVar[str] = "convection.stack.show"
    description: ClassVar[str] = "The stack as Heat's API shows it."
    input_schema: ClassVar[Mapping[str, InputParam]] = {"name": _NAME}
    safe_to_rerun: ClassVar[bool] = True

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        try:
            stack = await _stacks(self, ctx).show(ctx.project, params["name"])
        except ConvectionError as exc:
            return Failure(str(exc))
        if stack is None:
            return Failure(f"The Stack ({params['name']}) could not be found.")
        return Success(dict(stack))


class StackOutputs(ActionPlugin):
    name: ClassVar[str] = "convection.stack.outputs"
    description: ClassVar[str] = "The stack's outputs, {output_key: output_value}."
    input_schema: ClassVar[Mapping[str, InputParam]] = {"name": _NAME}
    safe_to_rerun: ClassVar[bool] = True

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        try:
            return Success(dict(await _stacks(self, ctx).outputs(ctx.project, params["name"])))
        except ConvectionError as exc:
            return Failure(str(exc))


def _signals(action: ActionPlugin, ctx: ActionContext) -> SignalOps:
    if ctx.signals is None:
        raise ConvectionError(NO_SERVICE.format(action=action.name))
    return ctx.signals


class Signal(ActionPlugin):
    name: ClassVar[str] = "convection.signal"
    description: ClassVar[str] = (
        "Signals a stack's resource (a wait condition handle, a deployment); "
        "the result is the stored signal's id."
    )
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "stack": _NAME,
        "resource": InputParam("string", required=True, description="The resource's name."),
        "data": InputParam("object", default={}, description="The signal's data."),
    }

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        args = arguments(self, params)
        try:
            signal_id = await _signals(self, ctx).signal(
                ctx.project, args["stack"], args["resource"], args["data"]
            )
        except ConvectionError as exc:
            return Failure(str(exc))
        return Success({"signal_id": signal_id})


ACTIONS: Final[tuple[type[ActionPlugin], ...]] = (
    StackCreate,
    StackUpdate,
    StackDelete,
    StackShow,
    StackOutputs,
    Signal,
)
