"""``LocalWorkflows``: the workflow operations on this process's store.

The embedded side of :class:`~convection.cli.workflow_service.WorkflowService`:
each method is one of ``convection.workflows``' operations with the store
put in, nothing more, so what the commands print in embedded mode is what
the operations return. The store is opened by the first operation that
needs it, and ``--wait``'s engine is built only when a command waits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from convection.cli.workflow_service import DefinitionKind
    from convection.convergence import Engine
    from convection.service import Stacks
    from convection.store import Store
    from convection.workflows import Uploaded

Dicts = list[dict[str, Any]]
Scope = Literal["private", "public"]


def _operations(kind: DefinitionKind) -> tuple[Callable[..., Any], ...]:
    """A kind's create, update, list, get and delete (imported here: ``--help``
    must not load the language). Actions are listed by ``actions``, which
    takes the system ones too, not by ``list``."""
    from convection import workflows as w

    table: dict[str, tuple[Callable[..., Any], ...]] = {
        "workflow": (w.create_workflows, w.update_workflows, w.list_workflows, w.get_workflow,
                     w.delete_workflow),
        "workbook": (w.create_workbook, w.update_workbook, w.list_workbooks, w.get_workbook,
                     w.delete_workbook),
        "action": (w.create_actions, w.update_actions, w.list_actions, w.get_action,
                   w.delete_action),
    }  # fmt: skip
    return table[kind]


class LocalWorkflows:
    """The workflow operations over the store ``store()`` opens."""

    def __init__(self, store: Callable[[], Store], stacks: Callable[[], Stacks]) -> None:
        self._store = store
        self._stacks = stacks

    @property
    def engine(self) -> Engine:
        """The embedded engine, running workflows too: ``--wait`` runs it here."""
        from convection.workflows import engine_for

        return engine_for(self._stacks())

    def close(self) -> None:
        """Nothing of its own: the invocation closes the store."""

    # -- definitions -------------------------------------------------------------------
    def create(
        self, project: str, kind: DefinitionKind, text: str, *, source: str, namespace: str,
        scope: Scope,
    ) -> Uploaded:  # fmt: skip
        create = _operations(kind)[0]
        found: Uploaded = create(
            self._store(), project, text, source=source, namespace=namespace, scope=scope
        )
        return found

    def update(
        self, project: str, kind: DefinitionKind, text: str, *, source: str, namespace: str,
        scope: Scope, identifier: str | None = None,
    ) -> Uploaded:  # fmt: skip
        """Only a workflow is updated by ``identifier`` (``--id``)."""
        update = _operations(kind)[1]
        chosen = {} if identifier is None else {"identifier": identifier}
        found: Uploaded = update(
            self._store(), project, text, source=source, namespace=namespace, scope=scope,
            **chosen,
        )  # fmt: skip
        return found

    def list(
        self, project: str, kind: DefinitionKind, *, namespace: str | None = None,
        filters: Mapping[str, Any] | None = None, sort_keys: Sequence[str] = ("created_at",),
        sort_dir: Literal["asc", "desc"] = "asc", limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        lister = _operations(kind)[2]
        found: Dicts = lister(
            self._store(), project, namespace=namespace, filters=filters, sort_keys=sort_keys,
            sort_dir=sort_dir, limit=limit, marker=marker,
        )  # fmt: skip
        return found

    def get(
        self, project: str, kind: DefinitionKind, identifier: str, namespace: str = ""
    ) -> dict[str, Any]:
        found: dict[str, Any] = _operations(kind)[3](self._store(), project, identifier, namespace)
        return found

    def delete(
        self, project: str, kind: DefinitionKind, identifier: str, namespace: str = ""
    ) -> None:
        _operations(kind)[4](self._store(), project, identifier, namespace)

    def actions(
        self, project: str, *, namespace: str | None = None, is_system: bool | None = None
    ) -> Dicts:
        from convection.workflows import list_actions

        return list_actions(self._store(), project, namespace=namespace, is_system=is_system)

    # -- executions --------------------------------------------------------------------
    def create_execution(
        self, project: str, workflow: str, *, input: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None, namespace: str = "", description: str = "",
    ) -> dict[str, Any]:  # fmt: skip
        from convection.workflows import create_execution

        return create_execution(
            self._store(), project, workflow, input=input, params=params, namespace=namespace,
            description=description,
        )  # fmt: skip

    def list_executions(
        self, project: str, *, filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",), sort_dir: str = "asc",
        limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        from convection.workflows import list_executions

        return list_executions(
            self._store(), project, filters=filters, sort_keys=sort_keys, sort_dir=sort_dir,
            limit=limit, marker=marker,
        )  # fmt: skip

    def get_execution(self, project: str, execution_id: str) -> dict[str, Any]:
        from convection.workflows import get_execution

        return get_execution(self._store(), project, execution_id)

    def update_execution(
        self, project: str, execution_id: str, *, state: str | None = None,
        state_info: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        from convection.workflows import update_execution

        return update_execution(
            self._store(), project, execution_id, state=state, state_info=state_info
        )

    def delete_execution(self, project: str, execution_id: str, *, force: bool = False) -> None:
        from convection.workflows import delete_execution

        delete_execution(self._store(), project, execution_id, force=force)

    # -- tasks and action executions ----------------------------------------------------
    def list_tasks(
        self, project: str, *, execution_id: str | None = None,
        filters: Mapping[str, Any] | None = None, sort_keys: Sequence[str] = ("created_at",),
        sort_dir: str = "asc", limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        from convection.workflows import list_tasks

        return list_tasks(
            self._store(), project, execution_id=execution_id, filters=filters,
            sort_keys=sort_keys, sort_dir=sort_dir, limit=limit, marker=marker,
        )  # fmt: skip

    def get_task(self, project: str, task_id: str) -> dict[str, Any]:
        from convection.workflows import get_task

        return get_task(self._store(), project, task_id)

    def rerun_task(
        self, project: str, task_id: str, *, reset: bool = True,
        env: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        from convection.workflows import rerun_task

        return rerun_task(self._store(), project, task_id, reset=reset, env=env)

    def skip_task(self, project: str, task_id: str) -> dict[str, Any]:
        from convection.workflows import skip_task

        return skip_task(self._store(), project, task_id)

    def list_action_executions(
        self, project: str, *, task_execution_id: str | None = None,
        sort_keys: Sequence[str] = ("created_at",), sort_dir: str = "asc",
        limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        from convection.workflows import list_action_executions

        return list_action_executions(
            self._store(), project, task_execution_id=task_execution_id, sort_keys=sort_keys,
            sort_dir=sort_dir, limit=limit, marker=marker,
        )  # fmt: skip

    def get_action_execution(self, project: str, action_execution_id: str) -> dict[str, Any]:
        from convection.workflows import get_action_execution

        return get_action_execution(self._store(), project, action_execution_id)

    # -- cron triggers and environments -------------------------------------------------
    def create_cron_trigger(
        self, project: str, name: str, workflow: str, *,
        workflow_input: Mapping[str, Any] | None = None,
        workflow_params: Mapping[str, Any] | None = None, pattern: str | None = None,
        first_time: str | None = None, count: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """The operation finds ``workflow`` by name or id, as the API does."""
        from convection.workflows import create_cron_trigger

        return create_cron_trigger(
            self._store(), project, name, workflow_name=workflow, workflow_input=workflow_input,
            workflow_params=workflow_params, pattern=pattern, first_time=first_time, count=count,
        )  # fmt: skip

    def list_cron_triggers(
        self, project: str, *, filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",), sort_dir: Literal["asc", "desc"] = "asc",
        limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        from convection.workflows import list_cron_triggers

        return list_cron_triggers(
            self._store(), project, filters=filters, sort_keys=sort_keys, sort_dir=sort_dir,
            limit=limit, marker=marker,
        )  # fmt: skip

    def get_cron_trigger(self, project: str, identifier: str) -> dict[str, Any]:
        from convection.workflows import get_cron_trigger

        return get_cron_trigger(self._store(), project, identifier)

    def delete_cron_trigger(self, project: str, identifier: str) -> None:
        from convection.workflows import delete_cron_trigger

        delete_cron_trigger(self._store(), project, identifier)

    def create_environment(self, project: str, values: Mapping[str, Any]) -> dict[str, Any]:
        from convection.workflows import create_environment

        return create_environment(self._store(), project, values)

    def update_environment(self, project: str, values: Mapping[str, Any]) -> dict[str, Any]:
        from convection.workflows import update_environment

        return update_environment(self._store(), project, values)

    def list_environments(
        self, project: str, *, filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",), sort_dir: Literal["asc", "desc"] = "asc",
        limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        from convection.workflows import list_environments

        return list_environments(
            self._store(), project, filters=filters, sort_keys=sort_keys, sort_dir=sort_dir,
            limit=limit, marker=marker,
        )  # fmt: skip

    def get_environment(self, project: str, name: str) -> dict[str, Any]:
        from convection.workflows import get_environment

        return get_environment(self._store(), project, name)

    def delete_environment(self, project: str, name: str) -> None:
        from convection.workflows import delete_environment

        delete_environment(self._store(), project, name)
