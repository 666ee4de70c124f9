"""One CLI invocation's state: global options → settings → store → service.

The global options (``--db``, ``--project``, ``--config``) are parsed by the
root callback, but nothing is opened there: ``convection template validate``
must not touch a database, and a command that does opens it once. So the
settings, the store and the :class:`~convection.service.stacks.Stacks` service are
built on first use and the store is closed when the invocation ends.

Precedence is :func:`convection.cli.config.load_settings`'s (default < file <
``CONVECTION_*`` < flag); the options are passed in as flags, never read
from the environment by Typer, so ``config show`` can say where each value
came from.

With a server URL (``--url``, ``CONVECTION_URL`` or the file's ``url``),
:attr:`Invocation.stacks` is a :class:`~convection.cli.remote.RemoteStacks`
that calls the server's REST API instead: both kinds of service satisfy
:class:`StackService`, the methods the commands call, so every command's
output and exit code are the same in both modes. Commands that need the
store itself (engine, server, token) use :attr:`Invocation.local_stacks`.
The workflow-family commands (workflow, workbook, action, execution, task,
action-execution) call :attr:`Invocation.workflows` the same way: a
:class:`~convection.cli.workflow_service.WorkflowService`, the workflow
operations on this process's store
(:class:`~convection.cli.local_workflows.LocalWorkflows`) or the server's
Mistral ``/v2`` API (:class:`~convection.cli.remote.workflows.RemoteWorkflows`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import typer

if TYPE_CHECKING:
    from convection.cli.config import Effective, Settings
    from convection.cli.local_workflows import LocalWorkflows
    from convection.cli.remote.stacks import RemoteStacks
    from convection.cli.remote.watch import Runner
    from convection.cli.remote.workflows import RemoteWorkflows
    from convection.cli.workflow_service import WorkflowService
    from convection.model import StackInputs
    from convection.service import StackPatch, StackReads, Stacks
    from convection.store import Store

#: A store URL SQLAlchemy renders unchanged: no credentials, no query, a
#: canonical port. It is printed as it is; anything else is parsed by
#: SQLAlchemy, whose import costs more than the rest of a ``config show``.
_PLAIN_URL = re.compile(r"[\w+]+://(?:[^/:@?\[\]]*|\[[^/@?\[\]]*\])(?::[1-9]\d*)?(?:/[^@?]*)?")


def redact_url(url: str) -> str:
    """A store URL fit to print: the password, if any, masked."""
    if _PLAIN_URL.fullmatch(url):
        return url
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


Dicts = list[dict[str, Any]]


class StackReading(Protocol):
    """What read-only commands call: :class:`~convection.service.StackReads`
    over this process's store (no engine, no compiler), or ``RemoteStacks``."""

    def show(self, project: str, name_or_id: str) -> dict[str, Any]: ...

    def list(
        self,
        project: str | None = None,
        *,
        include_deleted: bool = False,
        show_nested: bool = False,
        filters: Mapping[str, str | Sequence[str]] | None = None,
        tags: Sequence[str] = (),
        tags_any: Sequence[str] = (),
        not_tags: Sequence[str] = (),
        not_tags_any: Sequence[str] = (),
        sort_keys: Sequence[str] = (),
        sort_dir: Literal["asc", "desc"] = "desc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts: ...

    def resources(self, project: str, name_or_id: str, *, nested_depth: int = 0) -> Dicts: ...

    def resource(self, project: str, name_or_id: str, resource: str) -> dict[str, Any]: ...

    def events(
        self,
        project: str,
        name_or_id: str,
        *,
        resource_name: str | None = None,
        limit: int | None = None,
        marker: str | None = None,
        sort_dir: Literal["asc", "desc"] = "asc",
        nested_depth: int = 0,
    ) -> Dicts: ...

    def outputs(self, project: str, name_or_id: str) -> Dicts: ...

    def output(self, project: str, name_or_id: str, key: str) -> dict[str, Any]: ...

    def template(self, project: str, name_or_id: str) -> dict[str, Any]: ...

    def environment(self, project: str, name_or_id: str) -> dict[str, Any]: ...

    def files(self, project: str, name_or_id: str) -> dict[str, str]: ...

    def hook_poll(self, project: str, name_or_id: str, *, nested_depth: int = 0) -> Dicts: ...


class StackService(StackReading, Protocol):
    """The service the stack commands call: :class:`~convection.service.stacks.Stacks`
    in this process, or a server's API through ``RemoteStacks``. Same
    methods, same return shapes, same exceptions."""

    @property
    def engine(self) -> Runner: ...

    def create(
        self,
        project: str,
        name: str,
        inputs: StackInputs,
        *,
        timeout_mins: int | None = None,
        enable_rollback: bool = False,
        tags: Sequence[str] = (),
    ) -> dict[str, Any]: ...

    def update(
        self,
        project: str,
        name_or_id: str,
        inputs: StackInputs | StackPatch | None,
        *,
        existing: bool = False,
        clear_parameters: Sequence[str] = (),
        rollback: bool | None = None,
        timeout_mins: int | None = None,
        tags: Sequence[str] | None = None,
    ) -> dict[str, Any]: ...

    def preview_create(self, project: str, name: str, inputs: StackInputs) -> dict[str, Dicts]: ...

    def preview_update(
        self,
        project: str,
        name_or_id: str,
        inputs: StackInputs | StackPatch | None,
        *,
        existing: bool = False,
        clear_parameters: Sequence[str] = (),
    ) -> dict[str, Dicts]: ...

    def delete(self, project: str, name_or_id: str) -> None: ...

    def cancel_update(self, project: str, name_or_id: str, *, rollback: bool = True) -> None: ...

    def check(self, project: str, name_or_id: str) -> None: ...

    def suspend(self, project: str, name_or_id: str) -> None: ...

    def resume(self, project: str, name_or_id: str) -> None: ...

    def mark_unhealthy(
        self,
        project: str,
        name_or_id: str,
        resource: str,
        reason: str = "",
        *,
        unhealthy: bool = True,
    ) -> None: ...

    def signal(
        self, project: str, name_or_id: str, resource: str, data: Mapping[str, Any]
    ) -> int: ...

    def hook_clear(self, project: str, name_or_id: str, resource: str, hook_type: str) -> int: ...


@dataclass(slots=True)
class Invocation:
    """What the root callback parsed, and what was built from it so far."""

    config_file: Path | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    #: The lease owner this process's engine uses (a worker names itself).
    owner: str | None = None
    _effective: Effective | None = None
    _store: Store | None = None
    _stacks: Stacks | None = None
    _reads: StackReads | None = None
    _remote: RemoteStacks | None = None
    _workflows: LocalWorkflows | RemoteWorkflows | None = None

    @property
    def effective(self) -> Effective:
        if self._effective is None:
            from convection.cli.config import load_settings

            self._effective = load_settings(config_file=self.config_file, flags=self.flags)
        return self._effective

    @property
    def settings(self) -> Settings:
        return self.effective.settings

    @property
    def project(self) -> str:
        """What ``OS::project_id`` resolves to, and the scope of stack names."""
        return self.settings.project

    @property
    def db_url(self) -> str:
        """The store URL; the default SQLite file's directory is created."""
        if self.settings.db:
            return self.settings.db
        from convection.store import default_url

        return default_url()

    @property
    def remote(self) -> bool:
        """Whether the stack commands go to a server (``--url``)."""
        return self.settings.url is not None

    @property
    def stacks(self) -> StackService:
        """The server's API with ``--url``; otherwise the store, here."""
        if not self.remote:
            return self.local_stacks
        if self._remote is None:
            from convection.cli.remote.stacks import RemoteStacks  # httpx only when needed

            settings = self.settings
            token = settings.token.get_secret_value() if settings.token else None
            assert settings.url is not None
            self._remote = RemoteStacks(settings.url, token, limits=settings.limits())
        return self._remote

    @property
    def reads(self) -> StackReading:
        """What a read-only command needs: the server's API with ``--url``,
        else reads of the store that load neither the engine nor the
        compiler (the whole service once a command has built it)."""
        if self.remote:
            return self.stacks
        if self._stacks is not None:
            return self._stacks
        if self._reads is None:
            from convection.service import StackReads

            self._reads = StackReads(self.store)
        return self._reads

    @property
    def workflows(self) -> WorkflowService:
        """The workflow operations: the server's Mistral API with ``--url``;
        otherwise this process's store (opened when an operation needs it)."""
        if self._workflows is None:
            if self.remote:
                from convection.cli.remote.workflows import RemoteWorkflows

                token = self.settings.token
                assert self.settings.url is not None
                secret = token.get_secret_value() if token else None
                self._workflows = RemoteWorkflows(self.settings.url, secret)
            else:
                from convection.cli.local_workflows import LocalWorkflows

                self._workflows = LocalWorkflows(lambda: self.store, lambda: self.local_stacks)
        return self._workflows

    @property
    def store(self) -> Store:
        """This process's store, opened on first use."""
        if self._store is None:
            from convection.store import open_store

            self._store = open_store(self.db_url)
        return self._store

    @property
    def local_stacks(self) -> Stacks:
        """The service over this process's store (opened on first use)."""
        if self._stacks is None:
            # Imported here: the service brings the store, the compiler and
            # the engine, which commands that do not open a store never need.
            from convection.convergence import EngineConfig
            from convection.service import Stacks, StacksConfig

            settings = self.settings
            engine = EngineConfig(
                concurrency=settings.concurrency,
                lease_seconds=float(settings.engine_lease_seconds),
                api_url=settings.api_url,
                default_timeout_mins=settings.stack_timeout_mins,
            )
            if self.owner is not None:
                engine = dataclasses.replace(engine, owner=self.owner)
            config = StacksConfig(limits=settings.limits(), engine=engine)
            self._stacks = Stacks(self.store, config=config, on_engine=_with_workflows)
        return self._stacks

    def set_flag(self, name: str, value: Any) -> None:
        """A command's own option for a setting (``engine --concurrency``),
        as if given as a global flag: it wins over files and environment.
        Settings read before are read again. Call before :attr:`stacks` is
        built."""
        self.flags[name] = value
        self._effective = None

    def default(self, name: str, value: Any) -> None:
        """Use ``value`` for option ``name`` unless a file, the environment
        or a flag set it (``convection server`` defaults ``api_url`` to its
        bind address). Call before :attr:`stacks` is built."""
        if getattr(self.settings, name) is None:
            self.flags[name] = value
            self._effective = None

    def command(self) -> str:
        """``convection`` with the global flags this run was given, for
        hints a user can paste (values from env or a file still apply)."""
        parts = ["convection"]
        if self.flags.get("db"):
            parts += ["--db", redact_url(str(self.flags["db"]))]
        if self.flags.get("url"):
            parts += ["--url", str(self.flags["url"])]
        if self.flags.get("project"):
            parts += ["--project", str(self.flags["project"])]
        if self.config_file is not None:
            parts += ["--config", str(self.config_file)]
        return " ".join(parts)

    def close(self) -> None:
        if self._remote is not None:
            self._remote.close()
            self._remote = None
        if self._workflows is not None:
            self._workflows.close()
            self._workflows = None
        if self._store is not None:
            self._store.close()
            self._store = None
            self._stacks = None
            self._reads = None


def invocation(ctx: typer.Context) -> Invocation:
    """The invocation of the root context (made if a sub-app runs alone)."""
    root = ctx.find_root()
    if not isinstance(root.obj, Invocation):
        root.obj = Invocation()
        root.call_on_close(root.obj.close)
    return root.obj


def _with_workflows(stacks: Stacks) -> None:
    """One kernel for stacks and workflow executions, here as in ``convection
    engine``: a stack's OS::Mistral resources need the workflow layer."""
    from convection.workflows import engine_for

    engine_for(stacks)
