"""Entry point: ``convection``.

Exit codes: 0 on success, 1 on any user error (bad input, bad usage, a
failed operation). No user error prints a traceback.
"""

from __future__ import annotations

import os
import sys

import click
import typer

from convection.cli import template as template_cmds
from convection.cli.output import stderr
from convection.errors import ConvectionError, InvalidInput

app = typer.Typer(
    name="convection",
    help="Declarative orchestration for Heat (HOT) templates.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(template_cmds.app, name="template")


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
        for d in exc.diagnostics:
            stderr.print(str(d), markup=False, highlight=False)
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
