"""One way to print results: ``--format table|json|yaml`` on every read command.

JSON and YAML carry the field names of Heat's REST API bodies so scripts
written against Heat keep working; tables are for people.
"""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from convection.common import Diagnostic

#: How a secret value is shown: :data:`convection.service.views.MASK`, kept
#: here so that printing one does not import the service
#: (``tests/cli/test_startup.py`` checks that they are the same).
MASK = "******"

stdout = Console(soft_wrap=True)
stderr = Console(stderr=True, soft_wrap=True)


class Format(enum.StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


def emit(data: Any, fmt: Format, table: Callable[[], None] | None = None) -> None:
    """Print ``data`` as JSON/YAML, or call ``table`` to draw it."""
    if fmt is Format.json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    elif fmt is Format.yaml:
        import yaml  # only a YAML answer pays for PyYAML

        sys.stdout.write(yaml.safe_dump(data, sort_keys=False, default_flow_style=False))
    elif table is not None:
        table()
    else:
        sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def simple_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None
) -> None:
    t = Table(*columns, title=title, show_lines=False)
    for row in rows:
        t.add_row(*("" if v is None else str(v) for v in row))
    stdout.print(t)


def field_table(fields: dict[str, Any]) -> None:
    """A two-column Field/Value table, as the openstack client shows one object."""
    rows = []
    for k, v in fields.items():
        text = v if isinstance(v, str) else json.dumps(v, indent=2, default=str)
        rows.append((k, text))
    simple_table(("Field", "Value"), rows)


def print_diagnostics(diags: Sequence[Diagnostic], fmt: Format) -> None:
    """Errors go to stderr for people, and also to stdout as data for scripts.

    Consequences of an earlier error (``upstream``) are not shown; the rest
    are sorted by file position, so they read top to bottom like the file.
    """
    diags = sorted((d for d in diags if not d.upstream), key=_position)
    errors = [d for d in diags if d.is_error]
    if fmt is not Format.table:
        body = {
            "Error": str(errors[0]) if errors else "invalid input",
            "errors": [d.to_dict() for d in diags],
        }
        emit(body, fmt)
    for d in diags:
        stderr.print(_line(d), highlight=False)
    if errors:
        n = len(errors)
        stderr.print(f"{n} error{'s' if n != 1 else ''}", style="red", highlight=False)


def _position(d: Diagnostic) -> tuple[str, int, int]:
    if d.mark is None:
        return ("", 0, 0)
    return (d.mark.file, d.mark.line, d.mark.column)


def _line(d: Diagnostic) -> Text:
    """``error: file:line:col path: message``, styled but never marked up."""
    style, label = ("red", "error") if d.is_error else ("yellow", "warning")
    where = d.where()
    return Text.assemble((label, style), ": ", (f"{where}: " if where else "", "bold"), d.message)


def print_warnings(diags: Sequence[Diagnostic]) -> None:
    for d in diags:
        if not d.is_error:
            stderr.print(_line(d), highlight=False)
