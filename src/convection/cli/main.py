"""Entry point: ``convection``.

Exit codes: 0 on success, 1 on any user error (bad input, bad usage, a
failed operation), 2 for a command that cannot run against a server
(``--url``) and for a bug. No user error prints a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import click
import typer

from convection.cli import (
    agent_cmd,
    config_cmd,
    deploy,
    engine_cmd,
    server_cmd,
    stack,
    token_cmd,
)
from convection.cli import template as template_cmds
from convection.cli.context import Invocation
from convection.cli.output import Format, print_diagnostics, stderr
from convection.cli.remote import LOCAL_ONLY, refuse_local_only
from convection.errors import ConvectionError, InvalidInput

app = typer.Typer(
    name="convection",
    help="Declarative orchestration for Heat (HOT) templates.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(stack.app, name="stack")
app.command("deploy")(deploy.deploy)
app.command("engine")(engine_cmd.engine)
app.command("server")(server_cmd.server)
app.command("agent")(agent_cmd.agent)
app.add_typer(template_cmds.app, name="template")
app.add_typer(config_cmd.app, name="config")
app.add_typer(token_cmd.app, name="token")


@app.callback()
def global_options(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="URL",
            help="Store URL (sqlite:///FILE or postgresql://...); env CONVECTION_DB. "
            "Default: an SQLite file in your data directory.",
            show_default=False,
        ),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            metavar="NAME",
            help="Project that scopes stack names (OS::project_id); env CONVECTION_PROJECT. "
            "Default: default.",
            show_default=False,
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Config file (TOML); env CONVECTION_CONFIG. "
            "Precedence: default < file < environment < flag.",
            show_default=False,
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            metavar="URL",
            help="Work against a `convection server` (http://HOST:PORT) instead of a "
            "local store; env CONVECTION_URL.",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            metavar="TOKEN",
            help="X-Auth-Token for --url; env CONVECTION_TOKEN (safer: not in the "
            "process list). Never printed.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Nothing is opened here: settings and the store are built when a
    command first needs them (see :mod:`convection.cli.context`). Only a
    command that needs a store, given a server URL, is refused here."""
    flags = {"db": db, "project": project, "url": url, "token": token}
    ctx.obj = Invocation(config_file=config, flags=flags)
    ctx.call_on_close(ctx.obj.close)
    if ctx.invoked_subcommand in LOCAL_ONLY:
        refuse_local_only(ctx.invoked_subcommand, ctx.obj.settings.url)


def main() -> None:
    """The console script."""
    sys.exit(run(sys.argv[1:]))


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; tests call this in-process."""
    try:
        result = app(args=argv, standalone_mode=False, prog_name="convection")
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        stderr.print("Aborted.")
        return 1
    except click.ClickException as exc:
        exc.show()
        return 1
    except InvalidInput as exc:  # commands print their own; this is a fallback
        print_diagnostics(exc.diagnostics, Format.table)
        return 1
    except ConvectionError as exc:
        stderr.print(f"error: {exc}", markup=False, highlight=False)
        return 1
    except Exception as exc:  # a bug: say so plainly, keep the traceback opt-in
        if os.environ.get("CONVECTION_DEBUG"):
            raise
        stderr.print(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in Convection; rerun with CONVECTION_DEBUG=1 for details.",
            markup=False,
            highlight=False,
        )
        return 2
    return result if isinstance(result, int) else 0
