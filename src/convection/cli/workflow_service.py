"""The service the workflow-family commands call, in both modes.

``workflow``, ``workbook``, ``action``, ``execution``, ``task``,
``action-execution``, ``cron-trigger`` and ``environment`` call a
:class:`WorkflowService`: the workflow operations
(``convection.workflows``) on this process's store
(:class:`~convection.cli.local_workflows.LocalWorkflows`), or a server's
Mistral ``/v2`` API with ``--url``
(:class:`~convection.cli.remote.workflows.RemoteWorkflows`). Same
arguments, return shapes and exceptions (with the operations' messages),
so no command knows which one it called, as with the stack commands'
:class:`~convection.cli.context.StackService`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from convection.cli.remote.watch import Runner
    from convection.workflows import Uploaded

Dicts = list[dict[str, Any]]
Scope = Literal["private", "public"]

#: Which stored definitions a definition command works on.
DefinitionKind = Literal["workflow", "workbook", "action"]


class WorkflowService(Protocol):
    """The workflow operations, by project; actions are listed by
    :meth:`actions` (system ones too), not by :meth:`list`."""

    @property
    def engine(self) -> Runner: ...

    def create(
        self,
        project: str,
        kind: DefinitionKind,
        text: str,
        *,
        source: str,
        namespace: str,
        scope: Scope,
    ) -> Uploaded: ...  # fmt: skip

    def update(
        self,
        project: str,
        kind: DefinitionKind,
        text: str,
        *,
        source: str,
        namespace: str,
        scope: Scope,
        identifier: str | None = None,
    ) -> Uploaded: ...  # fmt: skip

    def list(
        self,
        project: str,
        kind: DefinitionKind,
        *,
        namespace: str | None = None,
        filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: Literal["asc", "desc"] = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts: ...  # fmt: skip

    def get(
        self, project: str, kind: DefinitionKind, identifier: str, namespace: str = ""
    ) -> dict[str, Any]: ...

    def delete(
        self, project: str, kind: DefinitionKind, identifier: str, namespace: str = ""
    ) -> None: ...

    def actions(
        self, project: str, *, namespace: str | None = None, is_system: bool | None = None
    ) -> Dicts: ...

    def create_execution(
        self,
        project: str,
        workflow: str,
        *,
        input: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        namespace: str = "",
        description: str = "",
    ) -> dict[str, Any]: ...  # fmt: skip

    def list_executions(
        self,
        project: str,
        *,
        filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: str = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts: ...  # fmt: skip

    def get_execution(self, project: str, execution_id: str) -> dict[str, Any]: ...

    def update_execution(
        self,
        project: str,
        execution_id: str,
        *,
        state: str | None = None,
        state_info: str | None = None,
    ) -> dict[str, Any]: ...  # fmt: skip

    def delete_execution(self, project: str, execution_id: str, *, force: bool = False) -> None: ...

    def list_tasks(
        self,
        project: str,
        *,
        execution_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: str = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts: ...  # fmt: skip

    def get_task(self, project: str, task_id: str) -> dict[str, Any]: ...

    def rerun_task(
        self,
        project: str,
        task_id: str,
        *,
        reset: bool = True,
        env: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]: ...  # fmt: skip

    def skip_task(self, project: str, task_id: str) -> dict[str, Any]: ...

    def list_action_executions(
        self,
        project: str,
        *,
        task_execution_id: str | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: str = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts: ...  # fmt: skip

    def get_action_execution(self, project: str, action_execution_id: str) -> dict[str, Any]: ...

    # -- cron triggers and environments (``store.schedules``) ---------------------------
    def create_cron_trigger(
        self,
        project: str,
        name: str,
        workflow: str,
        *,
        workflow_input: Mapping[str, Any] | None = None,
        workflow_params: Mapping[str, Any] | None = None,
        pattern: str | None = None,
        first_time: str | None = None,
        count: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """``workflow`` is a name or an id; ``first_time`` is UTC, ``YYYY-MM-DD HH:MM``."""
        ...

    def list_cron_triggers(
        self,
        project: str,
        *,
        filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: Literal["asc", "desc"] = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts: ...  # fmt: skip

    def get_cron_trigger(self, project: str, identifier: str) -> dict[str, Any]: ...

    def delete_cron_trigger(self, project: str, identifier: str) -> None: ...

    def create_environment(self, project: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` as an environment file holds them (``name, description,
        variables, scope``); the operation refuses any other key."""
        ...

    def update_environment(self, project: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """The environment ``values["name"]`` names, changed as Mistral's ``PUT``."""
        ...

    def list_environments(
        self,
        project: str,
        *,
        filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: Literal["asc", "desc"] = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts: ...  # fmt: skip

    def get_environment(self, project: str, name: str) -> dict[str, Any]: ...

    def delete_environment(self, project: str, name: str) -> None: ...
