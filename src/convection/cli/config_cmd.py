"""``convection config show``: every effective setting, and where it came from.

So "why is it using that database?" has an answer: each value is listed
with its source (``default``, ``file:PATH``, ``env:NAME`` or ``flag``).
"""

from __future__ import annotations

from typing import Any

import typer

from convection.cli.config import OPTIONS, Secret, Settings
from convection.cli.context import invocation, redact_url
from convection.cli.output import MASK, Format, emit
from convection.cli.stack_common import FormatOpt, cell, print_table

app = typer.Typer(help="Configuration.", no_args_is_help=True)


def effective_rows(settings: Settings, sources: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each option's value (the store URL resolved and its password masked)
    and source, in declaration order."""
    out: dict[str, dict[str, Any]] = {}
    for name, description in OPTIONS.items():
        value = getattr(settings, name)
        if name == "db":
            value = redact_url(settings.db_url())
        elif isinstance(value, Secret):  # --token: whether one is set, never what
            value = MASK
        out[name] = {
            "value": value,
            "source": sources.get(name, "default"),
            "description": description,
        }
    return out


@app.command("show")
def show(ctx: typer.Context, fmt: FormatOpt = Format.table) -> int:
    """Show every setting with its value and source. Precedence, lowest
    first: default, config file (--config or CONVECTION_CONFIG), environment
    (CONVECTION_<NAME>), command-line flag."""
    effective = invocation(ctx).effective
    body = effective_rows(effective.settings, dict(effective.sources))
    emit(
        body,
        fmt,
        lambda: print_table(
            ("Setting", "Value", "Source", "Description"),
            [(k, cell(v["value"]), v["source"], v["description"]) for k, v in body.items()],
        ),
    )
    return 0
