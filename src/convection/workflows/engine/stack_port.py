"""The workflow service as a stack's ``OS::Mistral::*`` resources see it
(``resources.WorkflowService``), over the same operations the ``/v2`` API
calls, scoped to the stack's project.

Why the operations and not the REST API: the resources run in the engine
that runs the executions, so going through HTTP would only add a token
to mint and a server to need; the operations are what the API calls
anyway, so the rules (input checks, scopes, Mistral's messages) are the
same. The store calls are short and synchronous, as everywhere in the
engine's jobs.

An execution started by a job on the engine's loop is taken up at once
(``take_up``), so a stack waiting on it does not wait for the next scan.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from convection.common import NotFound
from convection.store import Store
from convection.workflows.definitions import (
    create_workflows,
    delete_workflow,
    get_workflow,
    update_workflows,
)
from convection.workflows.engine.cron_triggers import (
    create_cron_trigger,
    delete_cron_trigger,
    get_cron_trigger,
)
from convection.workflows.engine.operations import (
    create_execution,
    delete_execution,
    get_execution,
)

Body = dict[str, Any]


class StackWorkflows:
    """``resources.WorkflowService`` for one project."""

    __slots__ = ("_project", "_store", "_take_up")

    def __init__(
        self, store: Store, project: str, take_up: Callable[[str], None] | None = None
    ) -> None:
        self._store = store
        self._project = project
        self._take_up = take_up

    async def create_workflows(self, definition: str) -> list[Body]:
        return create_workflows(self._store, self._project, definition, source="workflow").items

    async def update_workflows(self, definition: str) -> list[Body]:
        return update_workflows(self._store, self._project, definition, source="workflow").items

    async def get_workflow(self, name: str) -> Body | None:
        try:
            return get_workflow(self._store, self._project, name)
        except NotFound:
            return None

    async def delete_workflow(self, name: str) -> None:
        with contextlib.suppress(NotFound):
            delete_workflow(self._store, self._project, name)

    async def start_execution(
        self,
        workflow: str,
        *,
        execution_id: str,
        input: Mapping[str, Any],
        params: Mapping[str, Any],
        description: str = "",
    ) -> Body:
        given = dict(params)
        namespace = str(given.pop("namespace", "") or "")
        made = create_execution(
            self._store, self._project, workflow, input=input, params=given,
            namespace=namespace, description=description, execution_id=execution_id,
        )  # fmt: skip
        if self._take_up is not None:
            self._take_up_execution(made["id"])
        return made

    def _take_up_execution(self, execution_id: str) -> None:
        assert self._take_up is not None
        record = self._store.workflows.get_execution(execution_id)
        if record is not None and record.traversal_id is not None:
            self._take_up(record.traversal_id)

    async def get_execution(self, execution_id: str) -> Body | None:
        try:
            return get_execution(self._store, self._project, execution_id)
        except NotFound:
            return None

    async def delete_execution(self, execution_id: str) -> None:
        with contextlib.suppress(NotFound):
            delete_execution(self._store, self._project, execution_id, force=True)

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
        return create_cron_trigger(
            self._store, self._project, name, workflow_name=workflow,
            workflow_input=input, workflow_params=params, pattern=pattern,
            first_time=first_time, count=count,
        )  # fmt: skip

    async def get_cron_trigger(self, name: str) -> Body | None:
        try:
            return get_cron_trigger(self._store, self._project, name)
        except NotFound:
            return None

    async def delete_cron_trigger(self, name: str) -> None:
        with contextlib.suppress(NotFound):
            delete_cron_trigger(self._store, self._project, name)


def workflows_for(store: Store, take_up: Callable[[str], None]) -> Callable[..., StackWorkflows]:
    """The engine's ``resources.WorkflowsFor``."""

    def make(project: str, *, in_engine: bool) -> StackWorkflows:
        return StackWorkflows(store, project, take_up if in_engine else None)

    return make
