"""``OS::Mistral::Workflow``: a workflow whose definition is written as
the resource's properties, started by a signal.

As Heat's (``heat/engine/resources/openstack/mistral/workflow.py``): the
properties become a Mistral v2 document (``{version: '2.0', NAME: {type,
description, tags, output, input: [names], tasks: {...}, task-defaults:
{...}}}``, ``_`` spelled ``-``, ``None`` dropped, the legacy ``policies``
map merged into its task); create stores it and the physical id is the
workflow's name; an update stores the new document under that name; a
change of ``name`` replaces the resource. A signal starts an execution:
its ``input`` may only name inputs the ``input`` property declares
(whose values are the defaults), its ``params`` update the ``params``
property; with ``use_request_body_as_input`` the whole body is the input.
The execution's id is prepended to ``executions`` in the resource's data
(Heat's comma-separated entry), and delete deletes those executions, then
the workflow.

Crash safety: create remembers, before storing, which operation is
storing the workflow, so a re-run after ``kill -9`` adopts the workflow
it stored (and stores this definition over it) instead of failing on a
taken name; a re-run of a failed create is a new operation and never
adopts a workflow somebody else owns. A signal's execution id is derived
from the signal, so a repeated delivery starts nothing new.

Attributes, as Heat's: ``data`` (``{name, input}``), ``executions`` (each
``{id, workflow_name, created_at, updated_at, state, input, output}``)
and ``alarm_url`` (a pre-signed URL an alarm, or ``curl -X POST``, posts a
signal to; None without an API URL). Attributes are stored, not read
live: ``executions`` is read again after every signal, so it lists every
execution, with each one's state as of the last signal or stack action
(``convection execution show`` has the live state).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, ClassVar

import yaml

from convection.common import JSON, Diagnostic, InvalidInput, Path, format_path
from convection.hot import AllowedValues, Length, has_functions
from convection.resources import signal_urls
from convection.resources._context import ResourceContext
from convection.resources._plugin import Properties, ResourceFailure, ResourcePlugin, Token
from convection.resources._schema import AttributeSchema, AttributeType, PropertySchema
from convection.resources._schema import PropertyType as PT
from convection.resources._workflows import Body, WorkflowService
from convection.resources.mistral._service import (
    STORING,
    call,
    execution_id,
    execution_view,
    make_once,
    redacted,
    service,
)

TYPE_NAME = "OS::Mistral::Workflow"
#: Resource data: the started executions (newest first, comma-separated,
#: as Heat keeps them).
EXECUTIONS = "executions"

_TASK_KEYS = (
    "description", "on_error", "on_complete", "on_success", "action", "publish", "input",
    "requires", "retry", "wait_before", "wait_after", "pause_before", "timeout",
    "with_items", "keep_result", "target", "join", "concurrency",
)  # fmt: skip
#: What Kilo's ``policies`` map may hold; each is a task property now.
_POLICY_KEYS = ("pause_before", "wait_after", "wait_before", "timeout", "concurrency", "retry")


def _s(kind: PT, text: str, **kw: Any) -> PropertySchema:
    return PropertySchema(type=kind, description=text, **kw)


def _transitions() -> dict[str, PropertySchema]:
    return {
        "on_success": _s(PT.LIST, "Tasks to run after the task succeeded."),
        "on_error": _s(PT.LIST, "Tasks to run after the task failed."),
        "on_complete": _s(PT.LIST, "Tasks to run after the task, whatever its outcome."),
        "requires": _s(PT.LIST, "Tasks to run before this one (reverse workflows only)."),
    }


def _policies() -> dict[str, PropertySchema]:
    return {
        "retry": _s(PT.MAP, "How the task is repeated after an error."),
        "wait_before": _s(PT.INTEGER, "Seconds to wait before starting the task."),
        "wait_after": _s(PT.INTEGER, "Seconds to wait after the task, before the next ones."),
        "pause_before": _s(PT.BOOLEAN, "Pause the workflow before starting the task."),
        "timeout": _s(PT.INTEGER, "Seconds after which the task fails if not complete."),
        "concurrency": _s(PT.INTEGER, "At most this many with-items actions at once."),
    }


_TASK = _s(
    PT.MAP,
    "A task.",
    schema={
        "name": _s(PT.STRING, "Task name.", required=True),
        "description": _s(PT.STRING, "Task description."),
        "input": _s(PT.MAP, "The task's action or workflow input."),
        "action": _s(PT.STRING, "The action the task runs (or workflow)."),
        "workflow": _s(PT.STRING, "The workflow the task runs (or action); get_resource works."),
        "publish": _s(PT.MAP, "Variables to publish to the workflow context."),
        **_transitions(),
        "policies": _s(PT.MAP, "Legacy map of the task's policies.", hidden=True),
        **_policies(),
        "with_items": _s(PT.STRING, "Run the action or workflow once per item."),
        "keep_result": _s(PT.BOOLEAN, "Keep the task's result after it completes."),
        "target": _s(PT.STRING, "Where the task's action runs."),
        "join": _s(PT.STRING, "'all', or how many inbound branches the task waits for."),
    },
)


class MistralWorkflow(ResourcePlugin):
    type_name = TYPE_NAME
    signal_updates_attributes = True
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "name": _s(PT.STRING, "Workflow name (default: the physical resource name)."),
        "type": _s(
            PT.STRING,
            "Workflow type.",
            required=True,
            update_allowed=True,
            constraints=(AllowedValues(["direct", "reverse"]),),
        ),
        "use_request_body_as_input": _s(
            PT.BOOLEAN,
            "Take a signal's whole body as the input, not its 'input' and 'params' keys.",
            update_allowed=True,
        ),
        "tags": _s(PT.LIST, "Tags of the workflow.", update_allowed=True),
        "description": _s(PT.STRING, "Workflow description.", update_allowed=True),
        "input": _s(PT.MAP, "Inputs of the workflow, with default values.", update_allowed=True),
        "output": _s(PT.MAP, "The workflow's output (may hold expressions).", update_allowed=True),
        "params": _s(
            PT.MAP,
            "Execution parameters; a reverse workflow needs 'task_name'.",
            update_allowed=True,
        ),
        "task_defaults": _s(
            PT.MAP,
            "Defaults for every task.",
            update_allowed=True,
            schema={**_transitions(), **_policies()},
        ),
        "tasks": _s(
            PT.LIST,
            "The workflow's tasks.",
            required=True,
            update_allowed=True,
            schema=_TASK,
            constraints=(Length(min=1),),
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "data": AttributeSchema("The workflow's name and input.", AttributeType.MAP),
        "alarm_url": AttributeSchema(
            "A pre-signed URL that starts an execution when posted to.", AttributeType.STRING
        ),
        "executions": AttributeSchema(
            "The executions started by signals: id, workflow_name, created_at, updated_at, "
            "state, input, output.",
            AttributeType.LIST,
        ),
    }

    @classmethod
    def validate_values(
        cls, values: Properties, path: Path, *, strict: bool, stack_timeout: float | None
    ) -> list[Diagnostic]:
        diags = _reverse_rule(values, path)
        tasks = values.get("tasks")
        for i, task in enumerate(tasks if isinstance(tasks, list) else []):
            if isinstance(task, Mapping) and not has_functions(task):
                diags.extend(_task_rules(task, values.get("type"), (*path, "tasks", i)))
        return diags

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        await signal_urls.ensure(ctx)
        if ctx.physical_id is not None:
            return None
        wf = service(ctx, self.type_name)
        name = workflow_name(ctx, props)
        text = definition(name, props)
        stored = await make_once(
            ctx,
            lambda: _restore(wf, name, text),
            lambda: _first(wf.create_workflows(text), props),
        )
        await ctx.set_physical_id(str(stored["name"]))
        return None

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        wf = service(ctx, self.type_name)
        name = ctx.physical_id or workflow_name(ctx, props)
        stored = await call(_first(wf.update_workflows(definition(name, props)), props))
        await ctx.set_data({**ctx.data, "name": stored["name"]})
        return None

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        signal_urls.revoke(ctx)
        name = ctx.physical_id or (workflow_name(ctx, props) if STORING in ctx.data else None)
        if name is None:
            return None
        wf = service(ctx, self.type_name)
        for started in _executions(ctx.data):
            await call(wf.delete_execution(started))
        await call(wf.delete_workflow(name))
        return None

    async def signal(self, ctx: ResourceContext, props: Properties, details: JSON) -> str:
        inputs, params = _signal_parts(props, details)
        _check_signal(props, inputs, params)
        wf = service(ctx, self.type_name)
        run = await call(
            wf.start_execution(
                workflow_name(ctx, props),
                execution_id=execution_id(ctx),
                input={**(props.get("input") or {}), **(inputs or {})},
                params={**(props.get("params") or {}), **(params or {})},
            )
        )
        started = _executions(ctx.data)
        if run["id"] not in started:  # a repeated delivery added it already
            await ctx.set_data({**ctx.data, EXECUTIONS: ",".join([run["id"], *started])})
        return f"execution {run['id']} of {run['workflow_name']} started"

    async def reference_id(self, ctx: ResourceContext, props: Properties) -> JSON:
        return workflow_name(ctx, props)

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        if name == "data":
            return redacted({"name": ctx.physical_id, "input": props.get("input")}, ctx.secrets)
        if name == "executions":
            return redacted(await _execution_views(ctx), ctx.secrets)
        if name == "alarm_url":
            cred = signal_urls.stored(ctx.data)
            if cred is None or ctx.physical_id is None:
                return None
            where = (ctx.stack_name, ctx.stack_id, ctx.resource_name)
            return signal_urls.presigned_url(cred, signal_urls.SIGNAL, *where)
        return None


async def _restore(wf: WorkflowService, name: str, text: str) -> Body | None:
    """The workflow this operation stored before a crash, given this
    definition again (it may have been stored by an older one)."""
    if await wf.get_workflow(name) is None:
        return None
    return await _first(wf.update_workflows(text))


async def _first(stored: Awaitable[list[Body]], props: Properties | None = None) -> Body:
    """The one stored workflow; the service's refusal of the generated
    definition is told at the properties that made it (``tasks[1].publish.x``),
    since the generated text's lines mean nothing to the template's author."""
    try:
        return (await stored)[0]
    except InvalidInput as exc:
        tasks = [t.get("name") for t in (props or {}).get("tasks") or ()]
        raise ResourceFailure(
            "; ".join(f"{_property_path(d.path, tasks)}: {d.message}" for d in exc.diagnostics)
        ) from exc


def _property_path(path: Path, tasks: list[Any]) -> str:
    """A path in the generated document (``wf.tasks.say.wait-before``) as
    the property path that wrote it (``properties.tasks[1].wait_before``)."""
    rest = [str(p).replace("-", "_") if isinstance(p, str) else p for p in path[1:]]
    if len(rest) >= 2 and rest[0] == "tasks" and path[2] in tasks:
        rest = ["tasks", tasks.index(path[2]), *rest[2:]]
    elif rest[:1] == ["input"]:
        rest = ["input"]  # the names come from the input property's keys
    return format_path(("properties", *rest))


def workflow_name(ctx: ResourceContext, props: Properties) -> str:
    return str(props.get("name") or ctx.physical_resource_name)


def definition(name: str, props: Properties) -> str:
    """The Mistral v2 document the properties describe (Heat's
    ``prepare_properties``)."""
    body: dict[str, Any] = {
        k: props.get(k)
        for k in ("type", "description", "tags", "output")
        if props.get(k) is not None
    }
    if props.get("input"):  # Heat writes `input: []` for {}, which Mistral refuses
        body["input"] = list(props["input"])
    body["tasks"] = dict(_task(t) for t in props.get("tasks") or ())
    defaults = props.get("task_defaults")
    if defaults is not None:
        body["task-defaults"] = {k.replace("_", "-"): v for k, v in defaults.items() if v}
    return yaml.safe_dump({"version": "2.0", name: body}, sort_keys=False)


def _task(task: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    merged = {**task, **{k: v for k, v in (task.get("policies") or {}).items() if k in _TASK_KEYS}}
    out: dict[str, Any] = {}
    if merged.get("workflow") is not None:
        out["workflow"] = merged["workflow"]
    for key in _TASK_KEYS:
        value = merged.get(key)
        if value is not None:
            out[key.replace("_", "-")] = _join(value) if key == "join" else value
    return str(task["name"]), out


def _join(value: Any) -> Any:
    """``join`` is a string property; Mistral wants ``all`` or a number."""
    return int(value) if isinstance(value, str) and value.isdigit() else value


def _reverse_rule(values: Properties, path: Path) -> list[Diagnostic]:
    params = values.get("params")
    if values.get("type") != "reverse" or has_functions(params):
        return []
    if isinstance(params, Mapping) and params.get("task_name"):
        return []
    message = (
        "Mistral resource validation error: 'task_name' is not assigned in 'params' "
        "in case of reverse type workflow."
    )
    return [Diagnostic(message, (*path, "params"))]


def _task_rules(task: Mapping[str, Any], kind: Any, path: Path) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    if task.get("workflow") and task.get("action"):
        message = "Cannot define the following properties at the same time: workflow, action."
        found.append(Diagnostic(message, path))
    elif not task.get("workflow") and not task.get("action"):
        message = "At least one of the following properties must be specified: workflow, action."
        found.append(Diagnostic(message, path))
    if task.get("requires") is not None and kind == "direct":
        message = (
            f"Mistral resource validation error: task {task.get('name')} contains property "
            "'requires' in case of direct workflow. Only reverse workflows can contain "
            "property 'requires'."
        )
        found.append(Diagnostic(message, (*path, "requires")))
    for key in task.get("policies") or ():
        if task.get(key) is not None:
            message = f"Property policies and {key} cannot be used both at one time."
            found.append(Diagnostic(message, (*path, "policies", key)))
    if task.get("with_items") is None and task.get("concurrency") is not None:
        message = "concurrency cannot be specified without with_items."
        found.append(Diagnostic(message, (*path, "concurrency")))
    return found


def _signal_parts(props: Properties, details: JSON) -> tuple[Any, Any]:
    if props.get("use_request_body_as_input"):
        return details, None
    if details is None:
        return None, None
    if not isinstance(details, Mapping):
        raise ResourceFailure(
            f"Signal data error: Signal data must be a map, find a {_kind(details)}"
        )
    return details.get("input"), details.get("params")


def _check_signal(props: Properties, inputs: Any, params: Any) -> None:
    """Heat's ``_validate_signal_data``, with its words."""
    declared = props.get("input") or {}
    if inputs is not None:
        if not isinstance(inputs, Mapping):
            raise ResourceFailure(
                f"Signal data error: Input in signal data must be a map, find a {_kind(inputs)}"
            )
        for key in inputs:
            if key not in declared:
                raise ResourceFailure(f"Signal data error: Unknown input {key}")
    if params is not None and not isinstance(params, Mapping):
        raise ResourceFailure(f"Signal data error: Params must be a map, find a {_kind(params)}")


def _kind(value: Any) -> str:
    """Python's ``type()`` as Heat's message prints it, for JSON values."""
    return str(type(value))


def _executions(data: Mapping[str, JSON]) -> list[str]:
    found = data.get(EXECUTIONS)
    return [e for e in found.split(",") if e] if isinstance(found, str) else []


async def _execution_views(ctx: ResourceContext) -> list[JSON]:
    started = _executions(ctx.data)
    if not started or ctx.workflows is None:
        return []
    views: list[JSON] = []
    for found in started:
        execution = await ctx.workflows.get_execution(found)
        if execution is not None:  # deleted through the API meanwhile
            views.append(execution_view(execution))
    return views
