"""Workflows: what Heat's ``OS::Mistral::*`` resources may ask of the
workflow service.

Heat's Mistral resources talk to Mistral through python-mistralclient;
here the workflow engine runs in the same kernel as the stack, one layer
above the resources, so it reaches them through this narrow port, as
child stacks do through ``ctx.nested``. Everything is scoped to the
stack's project: a template can neither read nor start another project's
workflows, exactly as a Heat user's token could not.

Bodies are Mistral's REST bodies (``mistral/api/controllers/v2/
resources.py``) with JSON fields as values, not strings: an execution has
``id, workflow_name, state, state_info, input, output, created_at,
updated_at``...; a cron trigger ``name, pattern, next_execution_time,
remaining_executions``...

Crash safety follows the plugin contract in ``_context``: a plugin names
what it starts (``execution_id``), so starting it again after ``kill -9``
returns the execution that was already made instead of a second one;
deletes of what is already gone succeed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from convection.common import ConvectionError

Body = dict[str, Any]


class NoWorkflowService(ConvectionError):
    """The stack runs in an engine without the workflow layer attached (a
    bare ``convergence.Engine`` in a test, or a tool that never loads it)."""

    def __init__(self, resource_type: str) -> None:
        super().__init__(
            f"{resource_type} needs the workflow service, and this engine runs stacks only "
            "(run it under `convection server` or `convection engine`, which attach it)"
        )


class WorkflowsFor(Protocol):
    """How the engine gets a project's :class:`WorkflowService`.

    ``in_engine``: the caller is a job on the engine's own loop, so an
    execution it starts can be taken up at once; elsewhere (a signal
    delivered by an API request) the engine finds it at its next scan."""

    def __call__(self, project: str, *, in_engine: bool) -> WorkflowService: ...


@runtime_checkable
class WorkflowService(Protocol):
    """The stack's project's workflows, executions and cron triggers."""

    async def create_workflows(self, definition: str) -> list[Body]:
        """Store every workflow of a Mistral document (Mistral's ``POST
        /v2/workflows``); refused when a name is taken."""
        ...

    async def update_workflows(self, definition: str) -> list[Body]:
        """Replace each workflow of the document by name."""
        ...

    async def get_workflow(self, name: str) -> Body | None: ...

    async def delete_workflow(self, name: str) -> None:
        """Delete it; a workflow already gone is not an error."""
        ...

    async def start_execution(
        self,
        workflow: str,
        *,
        execution_id: str,
        input: Mapping[str, Any],
        params: Mapping[str, Any],
        description: str = "",
    ) -> Body:
        """Start ``workflow`` as execution ``execution_id``, or return that
        execution when it exists (a re-run after a crash)."""
        ...

    async def get_execution(self, execution_id: str) -> Body | None: ...

    async def delete_execution(self, execution_id: str) -> None:
        """Delete it, running or not (Heat deletes a workflow's executions
        with the resource); one already gone is not an error."""
        ...

    async def create_cron_trigger(
        self,
        name: str,
        workflow: str,
        *,
        input: Mapping[str, Any],
        params: Mapping[str, Any],
        pattern: str | None,
        first_time: str | None,
        count: int | None,
    ) -> Body:
        """Mistral's ``POST /v2/cron_triggers``; refused when the name is
        taken (the plugin knows whether it took it, before a crash)."""
        ...

    async def get_cron_trigger(self, name: str) -> Body | None: ...

    async def delete_cron_trigger(self, name: str) -> None: ...
