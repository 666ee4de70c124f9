"""``convection workflow|workbook|action ...``: Mistral's definitions, as
``openstack workflow ...`` (python-mistralclient's plugin) handles them.

``validate`` is Mistral's upload validation, from a file (every error
listed, each with ``file:line:column`` and its path); ``create``,
``update``, ``list``, ``show``, ``delete`` and ``definition`` keep
definitions in the store (``--db``, ``--project``), through
:mod:`convection.workflows.definitions`, or on a server (``--url``)
through its Mistral API: both are the invocation's
:class:`~convection.cli.workflow_service.WorkflowService`, so output and exit codes
are the same. ``workflow graph`` draws a file's or a stored workflow's
transitions or ``requires``. JSON and YAML output carry Mistral's REST
field names. Executions are ``cli/execution.py``'s.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convection.cli.context import invocation
from convection.cli.output import (
    Format,
    emit,
    field_table,
    print_diagnostics,
    print_warnings,
    simple_table,
    stderr,
)
from convection.cli.workflow_service import DefinitionKind, WorkflowService
from convection.common import ConvectionError, InvalidInput

if TYPE_CHECKING:
    from convection.common import Diagnostics

# The language is imported by the commands that use it: ``workflow --help``
# needs none of it (yaql and Jinja are not cheap to import).

app = typer.Typer(
    help="Mistral v2 workflows: create, update, list, show, delete, validate and draw.",
    no_args_is_help=True,
)
workbook_app = typer.Typer(
    help="Mistral v2 workbooks: create, update, list, show, delete and validate.",
    no_args_is_help=True,
)
action_app = typer.Typer(
    help="Actions: list and show them; create, update and delete ad-hoc actions.",
    no_args_is_help=True,
)

FileArg = Annotated[Path, typer.Argument(help="Definition file (YAML).", exists=False)]
FormatOpt = Annotated[Format, typer.Option("-f", "--format", help="Output format.")]
NamespaceOpt = Annotated[
    str, typer.Option("--namespace", help="Namespace of the definitions (default: none).")
]
PublicOpt = Annotated[
    bool, typer.Option("--public", help="Make the definitions public (scope public).")
]


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


def service(ctx: typer.Context) -> tuple[WorkflowService, str]:
    """The invocation's workflow operations (the store's, or with ``--url``
    the server's) and its project."""
    inv = invocation(ctx)
    return inv.workflows, inv.project


def _scope(public: bool) -> Any:
    return "public" if public else "private"


def _warned(uploaded: Any) -> list[dict[str, Any]]:
    print_warnings(uploaded.warnings)
    items: list[dict[str, Any]] = uploaded.items
    return items


def _uploaded(
    path: Path,
    fmt: Format,
    upload: Callable[[str, str], Any],
    table: Callable[[list[dict[str, Any]]], None],
) -> int:
    """Read, upload and print; a refused document prints every error."""
    try:
        items = _warned(upload(_read(path), str(path)))
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, fmt)
        return 1
    emit(items, fmt, lambda: table(items))
    return 0


def each_name(names: Sequence[str], act: Callable[[str], None], what: str) -> int:
    """python-mistralclient's ``do_action_on_many``: each name in turn,
    its error printed, then one line if any failed."""
    failed = 0
    for name in names:
        try:
            act(name)
        except ConvectionError as exc:
            stderr.print(str(exc), markup=False, highlight=False)
            failed += 1
            continue
        typer.echo(f"Request to delete {what} {name} has been accepted.")
    if failed:
        stderr.print(f"Unable to delete the specified {what}(s).", markup=False, highlight=False)
        return 1
    return 0


def _cell(value: Any) -> Any:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "<none>"
    return "<none>" if value is None or value == "" else value


def _rows_table(columns: Sequence[tuple[str, str]], items: list[dict[str, Any]]) -> None:
    simple_table([c[1] for c in columns], [[_cell(i[k]) for k, _ in columns] for i in items])


def _one_table(columns: Sequence[tuple[str, str]], item: dict[str, Any]) -> None:
    field_table({label: _cell(item[k]) for k, label in columns})


LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="At most this many (a page).")]
MarkerOpt = Annotated[
    str | None, typer.Option("--marker", help="The ID of the last one of the previous page.")
]
SortKeysOpt = Annotated[str, typer.Option("--sort-keys", help="Comma-separated keys to sort by.")]
SortDirOpt = Annotated[str, typer.Option("--sort-dirs", help="asc or desc.")]
FilterOpt = Annotated[
    list[str] | None,
    typer.Option("--filter", help="KEY=VALUE (id, name, scope); may repeat."),
]
ListNamespaceOpt = Annotated[
    str | None, typer.Option("--namespace", help="Only this namespace (default: all).")
]


def filter_options(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``--filter KEY=VALUE``s by key; a repeated key is Mistral's ``in:``."""
    out: dict[str, list[str]] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidInput.single(f"--filter {pair!r}: expected KEY=VALUE")
        out.setdefault(key, []).append(value)
    return dict(out)


def sort_options(keys: str, direction: str) -> tuple[list[str], Any]:
    if direction not in ("asc", "desc"):
        raise InvalidInput.single("Unknown sort direction, must be 'desc' or 'asc'.")
    return [k.strip() for k in keys.split(",") if k.strip()], direction


def listed_rows(call: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    try:
        return call()
    except ValueError as exc:  # an unknown sort or filter key
        raise InvalidInput.single(str(exc)) from None


def page_rows(
    lister: Callable[..., list[dict[str, Any]]],
    *args: Any,
    sort_keys: str,
    sort_dirs: str,
    limit: int | None,
    marker: str | None,
    **given: Any,
) -> list[dict[str, Any]]:
    """One page of any workflow-family listing: the command's sort, limit
    and marker options as every ``WorkflowService.list_*`` takes them, and
    an unknown sort or filter key as the user's error."""
    keys, direction = sort_options(sort_keys, sort_dirs)
    return listed_rows(
        lambda: lister(
            *args, **given, sort_keys=keys, sort_dir=direction, limit=limit, marker=marker
        )
    )


# -- the commands the three groups share -------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Kind:
    """What the groups' shared commands differ in, so that one body serves
    all three: the noun (messages, and the arguments ``NOUN``, ``NOUNS``),
    the table's columns, and whether an upload is one definition."""

    noun: DefinitionKind
    columns: Sequence[tuple[str, str]]
    one_help: str
    many_help: str
    one_per_upload: bool = False


def _named(command: Callable[..., int], name: str, annotation: Any) -> Callable[..., int]:
    """``command`` with its ``target`` parameter called ``name``: Typer names
    an argument after its parameter (usage, help panel, errors), and each
    group names its own (``WORKFLOW``, ``WORKBOOKS``...)."""
    signature = inspect.signature(command, eval_str=True)
    parameters = [
        p.replace(name=name, annotation=annotation) if p.name == "target" else p
        for p in signature.parameters.values()
    ]

    def call(**kwargs: Any) -> int:
        kwargs["target"] = kwargs.pop(name)
        return command(**kwargs)

    call.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return call


def _upload_table(kind: _Kind, items: list[dict[str, Any]]) -> None:
    if kind.one_per_upload:
        _one_table(kind.columns, items[0])
    else:
        _rows_table(kind.columns, items)


def _upload(
    ctx: typer.Context,
    kind: _Kind,
    definition: Path,
    namespace: str,
    public: bool,
    fmt: Format,
    *,
    update: bool = False,
    identifier: str | None = None,
) -> int:
    """One kind's create or update: read, upload and print."""
    workflows, project = service(ctx)

    def upload(text: str, source: str) -> Any:
        options: dict[str, Any] = {"source": source, "namespace": namespace}
        options["scope"] = _scope(public)
        if update:
            return workflows.update(project, kind.noun, text, identifier=identifier, **options)
        return workflows.create(project, kind.noun, text, **options)

    return _uploaded(definition, fmt, upload, lambda items: _upload_table(kind, items))


def _create(kind: _Kind) -> Callable[..., int]:
    def create(
        ctx: typer.Context,
        definition: FileArg,
        namespace: NamespaceOpt = "",
        public: PublicOpt = False,
        fmt: FormatOpt = Format.table,
    ) -> int:
        return _upload(ctx, kind, definition, namespace, public, fmt)

    return create


def _update(kind: _Kind) -> Callable[..., int]:
    def update(
        ctx: typer.Context,
        definition: FileArg,
        namespace: NamespaceOpt = "",
        public: PublicOpt = False,
        fmt: FormatOpt = Format.table,
    ) -> int:
        return _upload(ctx, kind, definition, namespace, public, fmt, update=True)

    return update


def _list(kind: _Kind) -> Callable[..., int]:
    def list_(
        ctx: typer.Context,
        namespace: ListNamespaceOpt = None,
        filters: FilterOpt = None,
        limit: LimitOpt = None,
        marker: MarkerOpt = None,
        sort_keys: SortKeysOpt = "created_at",
        sort_dirs: SortDirOpt = "asc",
        fmt: FormatOpt = Format.table,
    ) -> int:
        workflows, project = service(ctx)
        items = page_rows(
            workflows.list, project, kind.noun, namespace=namespace,
            filters=filter_options(filters), sort_keys=sort_keys, sort_dirs=sort_dirs,
            limit=limit, marker=marker,
        )  # fmt: skip
        emit(items, fmt, lambda: _rows_table(kind.columns, items))
        return 0

    return list_


def _show(kind: _Kind) -> Callable[..., int]:
    def show(
        ctx: typer.Context, target: str, namespace: NamespaceOpt = "", fmt: FormatOpt = Format.table
    ) -> int:
        workflows, project = service(ctx)
        item = workflows.get(project, kind.noun, target, namespace)
        emit(item, fmt, lambda: _one_table(kind.columns, item))
        return 0

    argument = Annotated[str, typer.Argument(help=kind.one_help)]
    return _named(show, kind.noun, argument)


def _definition(kind: _Kind) -> Callable[..., int]:
    def definition(ctx: typer.Context, target: str, namespace: NamespaceOpt = "") -> int:
        workflows, project = service(ctx)
        typer.echo(workflows.get(project, kind.noun, target, namespace)["definition"], nl=False)
        return 0

    argument = Annotated[str, typer.Argument(help=kind.one_help)]
    return _named(definition, kind.noun, argument)


def _delete(kind: _Kind) -> Callable[..., int]:
    def delete(ctx: typer.Context, target: list[str], namespace: NamespaceOpt = "") -> int:
        workflows, project = service(ctx)
        remove = workflows.delete
        return each_name(target, lambda n: remove(project, kind.noun, n, namespace), kind.noun)

    argument = Annotated[list[str], typer.Argument(help=kind.many_help)]
    return _named(delete, f"{kind.noun}s", argument)


_COMMANDS: dict[str, Callable[[_Kind], Callable[..., int]]] = {
    "create": _create,
    "update": _update,
    "list": _list,
    "show": _show,
    "definition": _definition,
    "delete": _delete,
}


def _register(group: typer.Typer, kind: _Kind, **helps: str) -> None:
    """The shared commands named in ``helps`` (command name to help text),
    registered on ``group`` in that order (the order ``--help`` lists)."""
    for name, help_text in helps.items():
        group.command(name, help=help_text)(_COMMANDS[name](kind))


# -- workflows --------------------------------------------------------------------------
_WORKFLOW = _Kind(
    noun="workflow",
    columns=(
        ("id", "ID"),
        ("name", "Name"),
        ("namespace", "Namespace"),
        ("project_id", "Project ID"),
        ("tags", "Tags"),
        ("input", "Input"),
        ("scope", "Scope"),
        ("created_at", "Created at"),
        ("updated_at", "Updated at"),
    ),
    one_help="Workflow name or ID.",
    many_help="Workflow names or IDs.",
)
_register(
    app,
    _WORKFLOW,
    create="Create the workflows of a document, each stored with its own definition.",
)


@app.command("update")
def workflow_update(
    ctx: typer.Context,
    definition: FileArg,
    workflow_id: Annotated[
        str | None, typer.Option("--id", help="Update this workflow (one per document).")
    ] = None,
    namespace: NamespaceOpt = "",
    public: PublicOpt = False,
    fmt: FormatOpt = Format.table,
) -> int:
    """Update the stored workflows of the document's names (or the one of --id)."""
    return _upload(
        ctx, _WORKFLOW, definition, namespace, public, fmt, update=True, identifier=workflow_id
    )


_register(
    app,
    _WORKFLOW,
    list="List the project's workflows and the public ones.",
    show="Show one workflow.",
    definition="Print a stored workflow's definition text.",
    delete="Delete workflows (their executions keep the text they started with).",
)


def _stored_workflow(ctx: typer.Context, name: str, namespace: str) -> Any:
    """A stored workflow's spec; a workbook's has no ``version`` of its own."""
    from convection.workflows import parse_workflows

    workflows, project = service(ctx)
    record = workflows.get(project, "workflow", name, namespace)
    text, source = str(record["definition"]), str(record["name"])
    specs, diags = parse_workflows(text, source)
    if diags.has_errors:
        again, more = parse_workflows("version: '2.0'\n" + text, source)
        if not more.has_errors:
            specs, diags = again, more
    if diags.has_errors or len(specs) != 1:
        print_diagnostics(diags.items, Format.table)
        raise typer.Exit(1)
    return specs[0]


@app.command("graph")
def workflow_graph(
    ctx: typer.Context,
    definition: Annotated[
        str, typer.Argument(help="A definition file, or the name or ID of a stored workflow.")
    ],
    workflow: Annotated[
        str | None,
        typer.Option(
            "--workflow", "-w", help="Which workflow of the file (default: the only one)."
        ),
    ] = None,
    namespace: NamespaceOpt = "",
    fmt: Annotated[
        GraphFormat, typer.Option("-f", "--format", help="dot, mermaid or json.")
    ] = GraphFormat.dot,
) -> int:
    """Draw a workflow: a direct one's transitions labelled success, error or
    complete; a reverse one's requires."""
    import json

    from convection.workflows import parse_workflows, to_dot, to_mermaid
    from convection.workflows import workflow_graph as graph_of

    path = Path(definition)
    if not path.is_file():
        spec = _stored_workflow(ctx, definition, namespace)
    else:
        specs, diags = parse_workflows(_read(path), str(path))
        if diags.has_errors:
            print_diagnostics(diags.items, Format.table)
            return 1
        print_warnings(diags.items)
        by_name = {s.name: s for s in specs}
        if workflow is None and len(specs) != 1:
            listed = ", ".join(by_name)
            raise InvalidInput.single(
                f"{path} holds {len(specs)} workflows ({listed}): name one with --workflow"
            )
        spec = specs[0] if workflow is None else by_name.get(workflow)
        if spec is None:
            raise InvalidInput.single(f"{path}: no workflow {workflow!r} ({', '.join(by_name)})")
    graph = graph_of(spec)
    if fmt is GraphFormat.json:
        typer.echo(json.dumps(graph.to_dict(), indent=2))
    else:
        typer.echo(to_dot(graph) if fmt is GraphFormat.dot else to_mermaid(graph), nl=False)
    return 0


# -- workbooks ------------------------------------------------------------------------------
_WORKBOOK = _Kind(
    noun="workbook",
    columns=(
        ("id", "ID"),
        ("name", "Name"),
        ("namespace", "Namespace"),
        ("project_id", "Project ID"),
        ("tags", "Tags"),
        ("scope", "Scope"),
        ("created_at", "Created at"),
        ("updated_at", "Updated at"),
    ),
    one_help="Workbook name.",
    many_help="Workbook names.",
    one_per_upload=True,
)
_register(
    workbook_app,
    _WORKBOOK,
    create="Create a workbook; its workflows and actions are stored as WORKBOOK.NAME.",
    update="Update the workbook of the document's name, and its workflows and actions.",
    list="List the project's workbooks and the public ones.",
    show="Show one workbook.",
    definition="Print a stored workbook's text.",
    delete="Delete workbooks (their workflows and actions stay, as in Mistral).",
)


# -- actions -----------------------------------------------------------------------------------
_ACTION = _Kind(
    noun="action",
    columns=(
        ("id", "ID"),
        ("name", "Name"),
        ("namespace", "Namespace"),
        ("is_system", "Is system"),
        ("input", "Input"),
        ("description", "Description"),
        ("tags", "Tags"),
        ("created_at", "Created at"),
        ("updated_at", "Updated at"),
    ),
    one_help="Ad-hoc action name or ID.",
    many_help="Ad-hoc action names or IDs.",
)
_ACTION_LIST = (("name", "Name"), ("is_system", "Is system"), ("input", "Input"),
                ("description", "Description"), ("namespace", "Namespace"))  # fmt: skip
_register(
    action_app,
    _ACTION,
    create="Create the ad-hoc actions of a document.",
    update="Update the stored ad-hoc actions of the document's names.",
    delete="Delete ad-hoc actions (system actions cannot be deleted).",
)


@action_app.command("list")
def action_list(
    ctx: typer.Context,
    namespace: ListNamespaceOpt = None,
    system: Annotated[
        bool | None,
        typer.Option("--system/--adhoc", help="Only system actions, or only ad-hoc ones."),
    ] = None,
    fmt: FormatOpt = Format.table,
) -> int:
    """List the actions a task can run: the system ones (built-ins and every
    plugin of the ``convection.actions`` entry point group) and the ad-hoc
    ones of the store."""
    workflows, project = service(ctx)
    body = workflows.actions(project, namespace=namespace, is_system=system)
    emit(body, fmt, lambda: _rows_table(_ACTION_LIST, body))
    return 0


def _system_parameters(name: str) -> dict[str, Any] | None:
    """A system action's input with types and defaults, from this process's
    registry (Mistral's API has no field for them); None if it has no such
    action."""
    from convection.workflows import default_registry

    registry = default_registry()
    if name not in set(registry.names()):
        return None
    cls = registry.lookup(name)
    return {
        p: {
            "type": list(spec.types),
            "required": spec.required,
            "default": spec.default,
            "secret": spec.secret,
            "description": spec.description,
        }
        for p, spec in cls.input_schema.items()
    }


@action_app.command("show")
def action_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Action name (e.g. std.http) or ad-hoc action ID.")],
    namespace: NamespaceOpt = "",
    fmt: FormatOpt = Format.table,
) -> int:
    """Show one action: a system one's input with types and defaults (secret
    inputs marked), or an ad-hoc one."""
    workflows, project = service(ctx)
    body = workflows.get(project, "action", name, namespace)
    parameters = _system_parameters(name) if body["is_system"] else None
    if parameters is not None:
        body["parameters"] = parameters

    def table() -> None:
        _one_table(_ACTION.columns, body)
        if "parameters" in body:
            simple_table(
                ("Parameter", "Type", "Required", "Default", "Secret"),
                [
                    (p, "|".join(s["type"]), s["required"], s["default"], s["secret"])
                    for p, s in body["parameters"].items()
                ],
            )

    emit(body, fmt, table)
    return 0


@action_app.command("definition")
def action_definition(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Ad-hoc action name or ID.")],
    namespace: NamespaceOpt = "",
) -> int:
    """Print a stored ad-hoc action's definition text."""
    workflows, project = service(ctx)
    body = workflows.get(project, "action", name, namespace)
    if body["definition"] is None:
        raise InvalidInput.single(f"{name} is a system action: it has no definition text")
    typer.echo(body["definition"], nl=False)
    return 0
