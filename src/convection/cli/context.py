"""One CLI invocation's state: global options → settings → store → service.

The global options (``--db``, ``--project``, ``--config``) are parsed by the
root callback, but nothing is opened there: ``convection template validate``
must not touch a database, and a command that does opens it once. So the
settings, the store and the :class:`~convection.stacks.Stacks` service are
built on first use and the store is closed when the invocation ends.

Precedence is :func:`convection.config.load_settings`'s (default < file <
``CONVECTION_*`` < flag); the options are passed in as flags, never read
from the environment by Typer, so ``config show`` can say where each value
came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from convection.config import Effective, Settings, load_settings
from convection.engine import EngineConfig
from convection.stacks import Stacks, StacksConfig
from convection.store.api import Store
from convection.store.sql import default_url, open_store


def redact_url(url: str) -> str:
    """A store URL fit to print: the password, if any, masked."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


@dataclass(slots=True)
class Invocation:
    """What the root callback parsed, and what was built from it so far."""

    config_file: Path | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    _effective: Effective | None = None
    _store: Store | None = None
    _stacks: Stacks | None = None

    @property
    def effective(self) -> Effective:
        if self._effective is None:
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
        return self.settings.db or default_url()

    @property
    def stacks(self) -> Stacks:
        if self._stacks is None:
            settings = self.settings
            config = StacksConfig(
                limits=settings.limits(),
                engine=EngineConfig(
                    concurrency=settings.concurrency,
                    lease_seconds=float(settings.engine_lease_seconds),
                ),
                default_timeout_mins=settings.stack_timeout_mins,
            )
            self._store = open_store(self.db_url)
            self._stacks = Stacks(self._store, config=config)
        return self._stacks

    def command(self) -> str:
        """``convection`` with the global flags this run was given, for
        hints a user can paste (values from env or a file still apply)."""
        parts = ["convection"]
        if self.flags.get("db"):
            parts += ["--db", redact_url(str(self.flags["db"]))]
        if self.flags.get("project"):
            parts += ["--project", str(self.flags["project"])]
        if self.config_file is not None:
            parts += ["--config", str(self.config_file)]
        return " ".join(parts)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
            self._stacks = None


def invocation(ctx: typer.Context) -> Invocation:
    """The invocation of the root context (made if a sub-app runs alone)."""
    root = ctx.find_root()
    if not isinstance(root.obj, Invocation):
        root.obj = Invocation()
        root.call_on_close(root.obj.close)
    return root.obj
