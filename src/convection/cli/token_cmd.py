"""``convection token create|list|revoke``: the API's credentials.

They work on the store itself (the global ``--db``), not through the API:
that is how the first token of a fresh server is made, and only someone
who can open the store can do it. ``convection server`` checks every
request against the same store, so a new or revoked token counts at once.

A secret is printed once, by ``create``; the store keeps only its hash, so
``list`` can show everything about a token except the secret.
"""

from __future__ import annotations

import enum
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convection.cli.context import Invocation, invocation
from convection.cli.output import Format, emit, stderr
from convection.cli.stack_common import FormatOpt, print_table, show_fields
from convection.common import InvalidInput, NotFound

if TYPE_CHECKING:
    # The tokens live in the store (SQLAlchemy): imported by the commands
    # that open it, not by ``token --help``.
    from convection.store import TokenRecord
    from convection.tokens import Tokens

app = typer.Typer(
    help="API tokens for `convection server` (made on the store: --db).", no_args_is_help=True
)

#: Seconds in each unit ``--expires-in`` accepts.
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"(\d+)([smhdw])")

ProjectOpt = Annotated[
    str | None,
    typer.Option(
        "--project",
        metavar="NAME",
        help="The token's project. Default: the global --project (CONVECTION_PROJECT, "
        "else 'default').",
        show_default=False,
    ),
]


class Role(enum.StrEnum):
    """:class:`convection.tokens.Role`'s values, for the option
    (``tests/cli/test_startup.py`` checks that they are the same)."""

    ADMIN = "admin"
    MEMBER = "member"
    READER = "reader"


def _tokens(inv: Invocation) -> Tokens:
    """The token service over the invocation's store."""
    from convection.tokens import Tokens

    return Tokens(inv.local_stacks.store)


def parse_duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` or a sum such as ``1d12h``.

    Units are required: a bare number is ambiguous (seconds? days?), and a
    token that lives a thousand times longer than meant is a real risk.
    """
    compact = text.strip().lower().replace(" ", "")
    if not compact or _DURATION.sub("", compact):
        raise InvalidInput.single(
            f"--expires-in {text!r}: expected a duration such as 30m, 12h, 7d or 1d12h "
            "(units s, m, h, d, w)"
        )
    seconds = sum(int(n) * _UNITS[unit] for n, unit in _DURATION.findall(compact))
    if seconds <= 0:
        raise InvalidInput.single(f"--expires-in {text!r}: must be longer than zero")
    return timedelta(seconds=seconds)


def scope(record: TokenRecord) -> str:
    """What a token may touch: its project, or the one thing it is narrowed to."""
    if record.resource_name is not None:
        return f"signal {record.stack_id}/{record.resource_name}"
    if record.server_id is not None:
        return f"server {record.server_id}"
    return "project"


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(UTC).isoformat(timespec="seconds")


def token_view(record: TokenRecord) -> dict[str, Any]:
    """A token as shown to people and scripts: never its secret or hash.
    The keys are in the order of ``token list``'s columns."""
    return {
        "id": record.id,
        "project": record.project,
        "role": record.role,
        "scope": scope(record),
        "description": record.description,
        "created_at": _iso(record.created_at),
        "expires_at": _iso(record.expires_at),
        "revoked_at": _iso(record.revoked_at),
    }


@app.command("create")
def create(
    ctx: typer.Context,
    project: ProjectOpt = None,
    role: Annotated[Role, typer.Option("--role", help="What the token may do.")] = Role.MEMBER,
    description: Annotated[
        str | None, typer.Option("--description", help="A note for `token list`.")
    ] = None,
    expires_in: Annotated[
        str | None,
        typer.Option(
            "--expires-in",
            metavar="DURATION",
            help="Lifetime, e.g. 30m, 12h, 7d. Default: until revoked.",
            show_default=False,
        ),
    ] = None,
    fmt: FormatOpt = Format.table,
) -> int:
    """Make a token and print its secret, once: it cannot be shown again.
    Roles: admin and member may read and change the project's stacks,
    reader may only read."""
    expires_at = None if expires_in is None else datetime.now(UTC) + parse_duration(expires_in)
    from convection.tokens import Role as StoredRole

    inv = invocation(ctx)
    issued = _tokens(inv).issue(
        project or inv.project,
        StoredRole(role.value),
        description=description,
        expires_at=expires_at,
    )
    body = {**token_view(issued.record), "secret": issued.secret}
    emit(body, fmt, lambda: show_fields(body))
    stderr.print(
        "Keep the secret now: it is not stored and cannot be shown again. "
        "Send it as the X-Auth-Token header (heatclient: --os-token).",
        markup=False,
        highlight=False,
    )
    return 0


@app.command("list")
def list_(
    ctx: typer.Context,
    project: Annotated[
        str | None,
        typer.Option("--project", metavar="NAME", help="Only this project's tokens."),
    ] = None,
    fmt: FormatOpt = Format.table,
) -> int:
    """List tokens, oldest first: id, project, role, scope, dates. Secrets
    are never stored, so never shown."""
    rows = [token_view(t) for t in _tokens(invocation(ctx)).list(project)]
    columns = ("ID", "Project", "Role", "Scope", "Description", "Created", "Expires", "Revoked")
    emit(rows, fmt, lambda: print_table(columns, [list(r.values()) for r in rows]))
    return 0


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    token_ids: Annotated[
        list[str], typer.Argument(metavar="ID...", help="Token ids (from `token list`).")
    ],
) -> int:
    """Revoke tokens: the server refuses them (401) from the next request on.
    Revoking a revoked token again is not an error."""
    tokens = _tokens(invocation(ctx))
    for token_id in token_ids:
        try:
            tokens.revoke(token_id)
        except NotFound:
            if not any(t.id == token_id for t in tokens.list()):
                raise
            typer.echo(f"Token {token_id} was already revoked.")
        else:
            typer.echo(f"Token {token_id} revoked.")
    return 0
