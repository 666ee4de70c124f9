"""Top-level commands imported only when they run: what keeps ``--help`` quick.

Every command's module is light to import (its heavy imports, such as the
compiler, the engine, the store or the web stack, are made in the
function bodies that need them), but importing all of them still costs
more than a ``--help`` may. So the root group knows its commands by name,
with the one-line help its listing shows (:class:`Lazy`), and imports a
command's module only when that command is resolved: to run it, or to
print its own ``--help``. ``convection --help`` lists every command from
the table without importing any of them.

The table is static so that listing costs nothing; ``tests/cli/
test_startup.py`` checks that each entry's help is the command's own.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, ClassVar, Literal

import click
import typer
import typer.core
import typer.main


@dataclass(frozen=True, slots=True)
class Lazy:
    """A top-level command, by where it lives: ``module:attribute`` is a
    ``typer.Typer`` (``kind="group"``) or a command function (``"command"``)."""

    target: str
    kind: Literal["group", "command"]
    #: What ``convection --help`` shows beside the name: the first paragraph
    #: of the command's own help, on one line.
    help: str

    def load(self, name: str) -> click.Command:
        """Import the module and convert it as ``add_typer``/``command`` would."""
        module_name, _, attribute = self.target.partition(":")
        found = getattr(importlib.import_module(module_name), attribute)
        if self.kind == "group":
            if not isinstance(found, typer.Typer):
                raise TypeError(f"{self.target} is not a typer.Typer")
            # get_group, not get_command: a sub-app gets no completion options.
            command: click.Command = typer.main.get_group(found)
        else:
            single = typer.Typer(add_completion=False)
            single.command(name)(found)
            command = typer.main.get_command(single)
        command.name = name
        return command


class LazyGroup(typer.core.TyperGroup):
    """A Typer root group whose commands come from :attr:`lazy`, in its order."""

    #: Set by a subclass: name -> where the command lives.
    lazy: ClassVar[Mapping[str, Lazy]] = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *(name for name in self.commands if name not in self.lazy)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = self.commands.get(cmd_name)
        if found is not None:
            return found
        entry = self.lazy.get(cmd_name)
        if entry is None:
            return None
        if self._listing:  # only its line in the listing is needed
            return click.Command(cmd_name, help=entry.help)
        command = entry.load(cmd_name)
        self.add_command(command, cmd_name)
        return command

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The help lists the commands from the table, importing none."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Typer's "Did you mean ...?" over every command, loaded or not."""
        try:
            return click.Group.resolve_command(self, ctx, args)
        except click.UsageError as exc:
            if self.suggest_commands and args:
                matches = get_close_matches(args[0], self.list_commands(ctx))
                if matches:
                    suggestions = ", ".join(f"{m!r}" for m in matches)
                    exc.message = f"{exc.message.rstrip('.')}. Did you mean {suggestions}?"
            raise
