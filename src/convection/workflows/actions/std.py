"""Mistral's simple standard actions (``mistral/actions/std_actions.py``).

Where Mistral blocks a worker (``time.sleep`` in std.echo's ``delay`` and
in std.sleep), these return :class:`Sleep` and finish in ``resume``: the
engine parks the task on a timer, so a thousand sleeping tasks hold no
worker. One difference: std.sleep keeps a fraction of a second (Mistral
truncates ``seconds`` to an int, so its ``0.5`` sleeps not at all).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from convection.workflows.actions.base import (
    ActionContext,
    ActionPlugin,
    Failure,
    InputParam,
    Outcome,
    Pending,
    Sleep,
    Success,
    arguments,
)

#: std.fail's error without ``error_data`` (Mistral raises ActionException with it).
FAIL_MESSAGE: Final = "Fail action expected exception."


def seconds_of(value: Any) -> float:
    """Mistral's leniency: a number or numeric string; negative or invalid is 0."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return 0.0
    return seconds if seconds > 0 else 0.0


class NoOp(ActionPlugin):
    name: ClassVar[str] = "std.noop"
    description: ClassVar[str] = "Does nothing; its result is null."
    safe_to_rerun: ClassVar[bool] = True

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        return Success(None)


class AsyncNoOp(ActionPlugin):
    name: ClassVar[str] = "std.async_noop"
    description: ClassVar[str] = (
        "Does nothing and stays RUNNING until its action execution is completed through the API."
    )
    safe_to_rerun: ClassVar[bool] = True
    is_async: ClassVar[bool] = True

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        return Pending()


class Echo(ActionPlugin):
    name: ClassVar[str] = "std.echo"
    description: ClassVar[str] = "Returns its output, after delay seconds."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "output": InputParam(required=True, description="The result."),
        "delay": InputParam(("number", "string"), default=0, description="Seconds to wait first."),
    }
    safe_to_rerun: ClassVar[bool] = True

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        delay = seconds_of(arguments(self, params)["delay"])
        if delay:
            return Sleep(delay)
        return Success(params["output"])

    async def resume(
        self, ctx: ActionContext, params: Mapping[str, Any], state: Mapping[str, Any]
    ) -> Outcome:
        return Success(params["output"])


class Fail(ActionPlugin):
    name: ClassVar[str] = "std.fail"
    description: ClassVar[str] = "Always fails, with error_data as its error when given."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "error_data": InputParam(default=None, description="The error result."),
    }
    safe_to_rerun: ClassVar[bool] = True

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        error_data = params.get("error_data")
        return Failure(error_data if error_data else FAIL_MESSAGE)


class SleepAction(ActionPlugin):
    name: ClassVar[str] = "std.sleep"
    description: ClassVar[str] = "Waits for seconds on a timer, holding no worker."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "seconds": InputParam(("number", "string"), default=1, description="How long."),
    }
    safe_to_rerun: ClassVar[bool] = True

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        seconds = seconds_of(arguments(self, params)["seconds"])
        return Sleep(seconds) if seconds else Success(None)

    async def resume(
        self, ctx: ActionContext, params: Mapping[str, Any], state: Mapping[str, Any]
    ) -> Outcome:
        return Success(None)


class TestDict(ActionPlugin):
    name: ClassVar[str] = "std.test_dict"
    description: ClassVar[str] = "Returns {key_prefix + i: val} for i below size."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "size": InputParam("integer", default=0, description="How many keys."),
        "key_prefix": InputParam(default="", description="Each key's prefix."),
        "val": InputParam(default="", description="Each key's value."),
    }
    safe_to_rerun: ClassVar[bool] = True
    __test__: ClassVar[bool] = False  # not a pytest class, whatever its name

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        args = arguments(self, params)
        size, prefix, val = args["size"], args["key_prefix"], args["val"]
        estimate = size * (len(str(prefix)) + len(json.dumps(val, default=str)) + 8)
        if estimate > ctx.limits.max_value_size:
            # Mistral has no bound: a size of 10**9 would take the engine's memory.
            return Failure(
                f"std.test_dict of size {size} would exceed the value size limit "
                f"of {ctx.limits.max_value_size} bytes"
            )
        return Success({f"{args['key_prefix']}{i}": args["val"] for i in range(size)})


#: Why std.javascript is refused, in its error.
JAVASCRIPT_REFUSED: Final = (
    "JavaScriptAction failed: Convection has no sandboxed JavaScript engine "
    "(Mistral needs py_mini_racer, v8eval or pyv8 for it, none of which is available "
    "here); compute the value with a YAQL or Jinja expression, or run a script with "
    "std.ssh or convection.software.run"
)


class JavaScript(ActionPlugin):
    name: ClassVar[str] = "std.javascript"
    description: ClassVar[str] = "Refused: no sandboxed JavaScript engine is available."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "script": InputParam("string", required=True, description="A function body."),
        "context": InputParam(default=None, description="The value of $ in the script."),
    }

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        return Failure(JAVASCRIPT_REFUSED)


class JS(JavaScript):
    name: ClassVar[str] = "std.js"


ACTIONS: Final[tuple[type[ActionPlugin], ...]] = (
    NoOp,
    AsyncNoOp,
    Echo,
    Fail,
    SleepAction,
    TestDict,
    JavaScript,
    JS,
)
