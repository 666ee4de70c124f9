"""``convection template ...``: validate, graph, versions and functions."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any

import typer

from convection.cli.output import (
    Format,
    emit,
    print_diagnostics,
    print_warnings,
    simple_table,
    stdout,
)
from convection.common import InvalidInput

# The HOT language, the compiler and the service are imported by the
# commands that use them: ``template --help`` needs none of them.

app = typer.Typer(help="Check and inspect templates.", no_args_is_help=True)
version_app = typer.Typer(help="Template versions.", no_args_is_help=True)
function_app = typer.Typer(help="Intrinsic functions.", no_args_is_help=True)
app.add_typer(version_app, name="version")
app.add_typer(function_app, name="function")

TemplateOpt = Annotated[Path, typer.Option("-t", "--template", help="Template file.")]
EnvOpt = Annotated[
    list[Path] | None,
    typer.Option("-e", "--environment", help="Environment file; repeat to merge in order."),
]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--parameter", help="key=value; repeat, or separate with ';'."),
]
ParamFileOpt = Annotated[
    list[str] | None,
    typer.Option("--parameter-file", help="key=path: the file's content is the value."),
]
FormatOpt = Annotated[Format, typer.Option("-f", "--format", help="Output format.")]


class GraphFormat(enum.StrEnum):
    """:class:`convection.model.graph_format.GraphFormat`'s values, for the
    option (``tests/cli/test_startup.py`` checks that they are the same)."""

    dot = "dot"
    mermaid = "mermaid"
    json = "json"


@app.command("validate")
def validate(
    template: TemplateOpt,
    environment: EnvOpt = None,
    parameter: ParamOpt = None,
    parameter_file: ParamFileOpt = None,
    show_nested: Annotated[
        bool,
        typer.Option("--show-nested", help="Also show the parameters of nested stacks."),
    ] = False,
    fmt: FormatOpt = Format.table,
) -> int:
    """Validate a template as Heat's template-validate does, listing every error."""
    from convection.service import read_inputs, validate_template

    try:
        inputs = read_inputs(template, environment or [], parameter or [], parameter_file or [])
        body, compiled = validate_template(inputs, show_nested=show_nested)
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, fmt)
        return 1
    print_warnings(compiled.warnings)
    emit(body, fmt, lambda: _validate_table(body))
    return 0


def _validate_table(body: dict[str, Any]) -> None:
    if body.get("Description"):
        stdout.print(str(body["Description"]).strip(), markup=False, highlight=False)
    _parameters_table(body)
    _nested_tables(body.get("NestedParameters") or {}, ())
    stdout.print("[green]Template is valid.[/green]")


def _parameters_table(body: dict[str, Any]) -> None:
    """The parameters of one stack; a hidden default stays masked on a
    terminal (``-f json`` shows the body as Heat returns it)."""
    rows = []
    for name, p in body.get("Parameters", {}).items():
        default = "******" if p.get("NoEcho") == "true" and "Default" in p else p.get("Default")
        rows.append((name, p.get("Type"), p.get("Label", ""), default, p.get("Description", "")))
    if rows:
        simple_table(("Parameter", "Type", "Label", "Default", "Description"), rows)
    for group in body.get("ParameterGroups", []):
        label = group.get("label", "")
        stdout.print(f"Group {label}: {', '.join(group.get('parameters', []))}", highlight=False)


def _nested_tables(nested: dict[str, Any], path: tuple[str, ...]) -> None:
    """``--show-nested``: each nested stack's parameters, under its path."""
    for name, entry in nested.items():
        where = "/".join((*path, name))
        stdout.print(f"Nested {where} ({entry.get('Type')})", markup=False, highlight=False)
        _parameters_table(entry)
        _nested_tables(entry.get("NestedParameters") or {}, (*path, name))


@app.command("graph")
def graph(
    template: TemplateOpt,
    environment: EnvOpt = None,
    parameter: ParamOpt = None,
    parameter_file: ParamFileOpt = None,
    fmt: Annotated[
        GraphFormat, typer.Option("-f", "--format", help="dot, mermaid or json.")
    ] = GraphFormat.dot,
) -> int:
    """Print the resource dependency graph (resources switched off by a condition are left out)."""
    from convection.model import GraphFormat as Rendering
    from convection.model import render_graph
    from convection.service import read_inputs, validate_template

    try:
        inputs = read_inputs(template, environment or [], parameter or [], parameter_file or [])
        _, compiled = validate_template(inputs)
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, Format.table)
        return 1
    print_warnings(compiled.warnings)
    labels = {n: r.type for n, r in compiled.definition.resources.items()}
    rendering = render_graph(compiled.graph, Rendering(fmt.value), labels=labels)
    typer.echo(rendering, nl=False)
    return 0


@version_app.command("list")
def version_list(fmt: FormatOpt = Format.table) -> int:
    """List the template versions, with their aliases."""
    from convection.hot import all_versions

    body = [
        {"version": v.key, "type": v.format, "aliases": list(v.aliases)}
        for v in all_versions(cfn=True)
    ]
    emit(
        body,
        fmt,
        lambda: simple_table(
            ("Version", "Type", "Aliases"),
            [(b["version"], b["type"], ", ".join(b["aliases"])) for b in body],
        ),
    )
    return 0


@function_app.command("list")
def function_list(
    version: Annotated[str, typer.Argument(help="e.g. heat_template_version.2016-10-14")],
    with_condition_func: Annotated[
        bool, typer.Option("--with-condition-func", help="Also list condition functions.")
    ] = False,
    fmt: FormatOpt = Format.table,
) -> int:
    """List the functions a template version supports."""
    from convection.hot import all_versions, function_descriptions, get_version, version_by_key

    v = version_by_key(version) if "." in version else get_version(version)
    if v is None:
        known = ", ".join(x.key for x in all_versions(cfn=True))
        raise InvalidInput.single(f"The template version {version!r} is not known ({known}).")
    body = function_descriptions(v, with_condition_functions=with_condition_func)
    emit(
        body,
        fmt,
        lambda: simple_table(
            ("Functions", "Description"), [(b["functions"], b["description"]) for b in body]
        ),
    )
    return 0
