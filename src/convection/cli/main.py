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

from convection.cli.context import Invocation
from convection.cli.lazy import Lazy, LazyGroup
from convection.cli.output import Format, print_diagnostics, stderr
from convection.cli.remote import LOCAL_ONLY, refuse_local_only
from convection.common import ConvectionError, InvalidInput

#: The top-level commands, in the order ``--help`` lists them, with the
#: line it shows for each; a command's module is imported only when it runs
#: (:mod:`convection.cli.lazy`).
COMMANDS = {
    "deploy": Lazy(
        "convection.cli.deploy:deploy",
        "command",
        "Create the stack if absent, update it otherwise, wait with progress, then print its "
        "outputs. Exit 1 if the operation failed.",
    ),
    "engine": Lazy(
        "convection.cli.engine_cmd:engine",
        "command",
        "Run the engine: take up every operation in progress in the store (creates, updates "
        "and deletes started without --wait, or interrupted) and run until stopped (Ctrl-C "
        "or SIGTERM: running jobs finish recording their outcome first) or, with "
        "--until-idle, until no work is left.",
    ),
    "worker": Lazy(
        "convection.cli.worker_cmd:worker",
        "command",
        "Run jobs that engines (`convection engine --workers`) deferred to the given queues, "
        "until stopped (Ctrl-C or SIGTERM). Needs a PostgreSQL store; any number of workers, "
        "on any machines, may share it.",
    ),
    "server": Lazy(
        "convection.cli.server_cmd:server",
        "command",
        "Serve Heat's orchestration API v1 (python-heatclient and `openstack stack` work "
        "against it) and Mistral's v2, and run the engine. Requests need an X-Auth-Token from "
        "`convection token create` on the same --db. OpenAPI documentation is at /docs, health at "
        "/healthz.",
    ),
    "agent": Lazy(
        "convection.cli.agent_cmd:agent",
        "command",
        "Poll this server's deployments, run each once with the same hooks as push mode, and "
        "report the results.",
    ),
    "stack": Lazy("convection.cli.stack:app", "group", "Stacks: create, update, delete, inspect."),
    "template": Lazy("convection.cli.template:app", "group", "Check and inspect templates."),
    "workflow": Lazy(
        "convection.cli.workflow:app",
        "group",
        "Mistral v2 workflows: create, update, list, show, delete, validate and draw.",
    ),
    "workbook": Lazy(
        "convection.cli.workflow:workbook_app",
        "group",
        "Mistral v2 workbooks: create, update, list, show, delete and validate.",
    ),
    "action": Lazy(
        "convection.cli.workflow:action_app",
        "group",
        "Actions: list and show them; create, update and delete ad-hoc actions.",
    ),
    "execution": Lazy(
        "convection.cli.execution:app",
        "group",
        "Mistral v2 workflow executions: create, list, show, pause, resume, cancel, delete; "
        "their input and output.",
    ),
    "task": Lazy(
        "convection.cli.execution:task_app",
        "group",
        "Task executions: list, show, rerun and skip them; their result and published variables.",
    ),
    "action-execution": Lazy(
        "convection.cli.execution:action_execution_app",
        "group",
        "Action executions of tasks: list and show them; their output.",
    ),
    "cron-trigger": Lazy(
        "convection.cli.cron_trigger:app",
        "group",
        "Cron triggers: start a workflow on a schedule; create, list, show and delete them.",
    ),
    "environment": Lazy(
        "convection.cli.environment:app",
        "group",
        "Mistral environments: named variables for executions' env(); create, list, show, "
        "update and delete them.",
    ),
    "config": Lazy("convection.cli.config_cmd:app", "group", "Configuration."),
    "token": Lazy(
        "convection.cli.token_cmd:app",
        "group",
        "API tokens for `convection server` (made on the store: --db).",
    ),
    "status": Lazy(
        "convection.cli.status_cmd:status",
        "command",
        "Show the engines, workers and servers running on the store (--db), from their "
        'heartbeats: jobs running and done, leases held, and "stale" for a process silent for '
        "over 15 s.",
    ),
}


class RootGroup(LazyGroup):
    lazy = COMMANDS


app = typer.Typer(
    name="convection",
    cls=RootGroup,
    help="Declarative orchestration for Heat (HOT) templates.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


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
