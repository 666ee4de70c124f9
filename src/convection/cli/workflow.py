"""``convection workflow|workbook|action ...``: Mistral's definitions, read
from files (``openstack workflow validate`` and friends).

Validation is Mistral's upload validation (every error listed, each with
``file:line:column`` and its path); ``workflow graph`` draws a definition's
transitions or ``requires``. Storing definitions and running executions
come with the workflow engine.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convection.cli.output import Format, emit, print_diagnostics, print_warnings, simple_table
from convection.common import InvalidInput

if TYPE_CHECKING:
    from convection.common import Diagnostics

# The language is imported by the commands that use it: ``workflow --help``
# needs none of it (yaql and Jinja are not cheap to import).

app = typer.Typer(help="Mistral v2 workflows: validate and draw.", no_args_is_help=True)
workbook_app = typer.Typer(help="Mistral v2 workbooks: validate.", no_args_is_help=True)
action_app = typer.Typer(
    help="Actions: list and show them; validate ad-hoc action files.", no_args_is_help=True
)

FileArg = Annotated[Path, typer.Argument(help="Definition file (YAML).", exists=False)]
FormatOpt = Annotated[Format, typer.Option("-f", "--format", help="Output format.")]


class GraphFormat(enum.StrEnum):
    dot = "dot"
    mermaid = "mermaid"
    json = "json"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput.single(f"{path}: cannot read the definition: {exc}") from None


def _validated(path: Path, parse: Callable[..., tuple[Any, Diagnostics]], fmt: Format) -> int:
    """Mistral's ``validate`` answer: ``Valid`` and the first ``Error``,
    with every diagnostic listed after it."""
    try:
        found, diags = parse(_read(path), str(path))
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, fmt)
        return 1
    if diags.has_errors:
        print_diagnostics(diags.items, fmt)
        return 1
    print_warnings(diags.items)
    names = [s.name for s in (found if isinstance(found, Sequence) else [found])]
    body = {"valid": True, "error": None, "names": names}
    emit(
        body,
        fmt,
        lambda: simple_table(("Valid", "Error", "Definitions"), [(True, "", ", ".join(names))]),
    )
    return 0


@app.command("validate")
def workflow_validate(definition: FileArg, fmt: FormatOpt = Format.table) -> int:
    """Validate a workflow definition as Mistral does at upload, listing every error."""
    from convection.workflows import parse_workflows

    return _validated(definition, parse_workflows, fmt)


@workbook_app.command("validate")
def workbook_validate(definition: FileArg, fmt: FormatOpt = Format.table) -> int:
    """Validate a workbook (workflows and ad-hoc actions) as Mistral does."""
    from convection.workflows import parse_workbook

    return _validated(definition, parse_workbook, fmt)


@action_app.command("validate")
def action_validate(definition: FileArg, fmt: FormatOpt = Format.table) -> int:
    """Validate an ad-hoc action definition as Mistral does."""
    from convection.workflows import parse_actions

    return _validated(definition, parse_actions, fmt)


@app.command("graph")
def workflow_graph(
    definition: FileArg,
    workflow: Annotated[
        str | None,
        typer.Option(
            "--workflow", "-w", help="Which workflow of the file (default: the only one)."
        ),
    ] = None,
    fmt: Annotated[
        GraphFormat, typer.Option("-f", "--format", help="dot, mermaid or json.")
    ] = GraphFormat.dot,
) -> int:
    """Draw a workflow: a direct one's transitions labelled success, error or
    complete; a reverse one's requires."""
    import json

    from convection.workflows import parse_workflows, to_dot, to_mermaid
    from convection.workflows import workflow_graph as graph_of

    specs, diags = parse_workflows(_read(definition), str(definition))
    if diags.has_errors:
        print_diagnostics(diags.items, Format.table)
        return 1
    print_warnings(diags.items)
    by_name = {s.name: s for s in specs}
    if workflow is None and len(specs) != 1:
        listed = ", ".join(by_name)
        raise InvalidInput.single(
            f"{definition} holds {len(specs)} workflows ({listed}): name one with --workflow"
        )
    spec = specs[0] if workflow is None else by_name.get(workflow)
    if spec is None:
        raise InvalidInput.single(f"{definition}: no workflow {workflow!r} ({', '.join(by_name)})")
    graph = graph_of(spec)
    if fmt is GraphFormat.json:
        typer.echo(json.dumps(graph.to_dict(), indent=2))
    else:
        typer.echo(to_dot(graph) if fmt is GraphFormat.dot else to_mermaid(graph), nl=False)
    return 0


def _action_row(cls: Any) -> dict[str, Any]:
    """An action as Mistral's action-definition API shows a system one."""
    from convection.workflows import input_text

    return {
        "name": cls.name,
        "is_system": True,
        "input": input_text(cls),
        "description": cls.description,
        "tags": [],
    }


@action_app.command("list")
def action_list(fmt: FormatOpt = Format.table) -> int:
    """List the actions a task can run: the built-ins and every plugin of
    the ``convection.actions`` entry point group."""
    from convection.workflows import default_registry

    registry = default_registry()
    body = [_action_row(registry.lookup(name)) for name in registry.names()]
    emit(
        body,
        fmt,
        lambda: simple_table(
            ("Name", "Input", "Description"),
            [(b["name"], b["input"], b["description"]) for b in body],
        ),
    )
    return 0


@action_app.command("show")
def action_show(
    name: Annotated[str, typer.Argument(help="Action name, e.g. std.http.")],
    fmt: FormatOpt = Format.table,
) -> int:
    """Show one action: its input with types and defaults (secret inputs marked)."""
    from convection.workflows import default_registry

    cls = default_registry().lookup(name)
    body = _action_row(cls)
    body["parameters"] = {
        p: {
            "type": list(spec.types),
            "required": spec.required,
            "default": spec.default,
            "secret": spec.secret,
            "description": spec.description,
        }
        for p, spec in cls.input_schema.items()
    }

    def table() -> None:
        simple_table(("Field", "Value"), [(k, body[k]) for k in ("name", "input", "description")])
        simple_table(
            ("Parameter", "Type", "Required", "Default", "Secret"),
            [
                (p, "|".join(s["type"]), s["required"], s["default"], s["secret"])
                for p, s in body["parameters"].items()
            ],
        )

    emit(body, fmt, table)
    return 0
