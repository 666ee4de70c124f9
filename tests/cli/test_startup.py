"""The CLI starts at once: ``--help`` imports none of the heavy packages.

Each check runs ``convection`` in a child process under ``python -X
importtime`` and reads which modules it imported, so it fails as soon as
someone imports the compiler, the engine, the store or the web stack at
the top of a module that ``--help`` loads. Timings are the bench's
(``bench/cli_bench.py``), not asserted here.

The rest holds the shortcuts that make it so to what they stand for: the
root's table of commands (:mod:`convection.cli.lazy`) to the commands'
own help, the enums and constants the CLI keeps a copy of to the
originals, the settings' pydantic-free path to pydantic's validation.
"""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import typer

from convection.cli import config as cli_config
from convection.cli import main as cli_main
from convection.cli.context import redact_url

#: Packages a ``--help`` (or ``config show``) must not import.
HEAVY = (
    "convection.agent",
    "convection.api",
    "convection.convergence",
    "convection.hot",
    "convection.kernel",
    "convection.model",
    "convection.plan",
    "convection.resources",
    "convection.service",
    "convection.software",
    "convection.store",
    "convection.tokens",
    "convection.workflows",
    "sqlalchemy",
    "yaql",
    "jinja2",
    "fastapi",
    "uvicorn",
    "pydantic",
    "httpx",
    "asyncssh",
)

#: The console script's entry point ([project.scripts] in pyproject.toml).
ENTRY = "from convection.cli.main import main; main()"

CLI = Path(__file__).parents[2] / "src" / "convection" / "cli"


def imported(*args: str, module: bool = False) -> set[str]:
    """The modules a ``convection ARGS`` process imports (it must exit 0)."""
    launch = ["-m", "convection"] if module else ["-c", ENTRY]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *launch, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "convection.cli.main" in names  # the parse worked
    return names


def heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        *([name, "--help"] for name in cli_main.COMMANDS),
        ["stack", "list", "--help"],
        ["execution", "create", "--help"],
        ["task", "list", "--help"],
        ["action-execution", "show", "--help"],
        ["config", "show"],
    ],
    ids=" ".join,
)
def test_help_imports_nothing_heavy(args: list[str]) -> None:
    assert heavy(imported(*args)) == []


def test_help_imports_no_command_module() -> None:
    """The root's help lists the commands from its table."""
    names = imported("--help")
    commands = {entry.target.partition(":")[0] for entry in cli_main.COMMANDS.values()}
    assert names.isdisjoint(commands)


def test_python_dash_m_convection_runs_the_cli() -> None:
    assert heavy(imported("--help", module=True)) == []


def test_the_table_is_every_command_with_its_own_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``convection --help`` from the table prints what it prints with every
    command loaded: same names, order and help lines."""
    assert cli_main.run(["--help"]) == 0
    lazy = capsys.readouterr().out
    group = typer.main.get_command(cli_main.app)
    assert isinstance(group, click.Group)
    for name, entry in cli_main.COMMANDS.items():
        command = entry.load(name)
        assert command.name == name
        first = (command.help or "").split("\n\n")[0]
        assert " ".join(first.split()) == entry.help, name
        group.add_command(command, name)
    with pytest.raises(SystemExit) as shown:
        group.main(["--help"], prog_name="convection")
    assert shown.value.code == 0
    assert capsys.readouterr().out == lazy


def test_a_mistyped_command_is_still_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main.run(["stak"]) != 0
    assert "Did you mean 'stack'" in capsys.readouterr().err  # (or 'task')


def test_copies_match_their_originals() -> None:
    """Kept in the CLI so that its modules import light; must not drift."""
    from convection.cli.output import MASK
    from convection.cli.template import GraphFormat
    from convection.cli.token_cmd import Role
    from convection.model.graph_format import GraphFormat as ModelGraphFormat
    from convection.service import MASK as SERVICE_MASK
    from convection.tokens import Role as TokenRole

    assert MASK == SERVICE_MASK
    assert [(m.name, m.value) for m in Role] == [(m.name, m.value) for m in TokenRole]
    assert [(m.name, m.value) for m in GraphFormat] == [(m.name, m.value) for m in ModelGraphFormat]


URLS = (
    "sqlite:///relative.db",
    "sqlite:////abs/path with space.db",
    "sqlite://",
    "sqlite:///:memory:",
    "postgresql://host:5432/db",
    "postgresql+psycopg://[::1]:5432/db",
    "postgresql://host%20x/db",
    "postgresql://h:5432",
    "mysql://host:05432/db",
    "postgresql://admin:s3cret@db.example/heat",
    "postgresql://admin@db.example/heat",
    "sqlite:///x.db?mode=ro&cache=shared",
    "not a url",
)


@pytest.mark.parametrize("url", URLS)
def test_redact_url_is_sqlalchemys(url: str) -> None:
    """The shortcut for URLs without credentials changes nothing."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        expected = make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        expected = url
    assert redact_url(url) == expected


#: Values each kind of setting may meet: from a flag, the environment
#: (strings) or a TOML file (any type).
VALUES: dict[str, tuple[Any, ...]] = {
    "int": (8, "8", "007", "-1", "-01", " 8", "8.0", "1_000", "lots", "", 8.0, 8.5, True, 0, -2),
    "str": ("x", "", " a ", 5, None, True),
    "str | None": (
        None,
        "",
        "  ",
        "http://h:8004/",
        "https://h",
        "ftp://h",
        "http://h/v1/p",
        "http://h?q",
        5,
    ),
    "Secret | None": (None, "", "s3cret", 5),
    "bool": (True, False, "1", "0", "true", "False", "YES", "off", " on ", "t", "maybe", "", 1, 2),
}


def _outcome(call: Any) -> Any:
    try:
        return call()
    except Exception as exc:  # compared as the message a user would read
        return (type(exc).__name__, str(exc))


def test_plain_settings_are_what_pydantic_makes_of_them() -> None:
    """For every value, alone: the pydantic-free path gives pydantic's
    result, or leaves the value to pydantic."""
    plain = validated = 0
    for option in dataclasses.fields(cli_config.Settings):
        for value in VALUES[str(option.type)]:
            values = {option.name: value}
            sources = {option.name: "flag"}
            expected = _outcome(lambda v=values, s=sources: cli_config._validated(v, s))
            quick = cli_config._plain(values)
            if quick is None:
                validated += 1
                continue
            plain += 1
            assert quick == expected, (option.name, value)
    assert plain and validated
    assert cli_config._plain({"colour": "red"}) is None


def test_the_cli_has_no_import_cycle() -> None:
    """Over every import of the CLI's modules: top level, TYPE_CHECKING and
    inside functions."""
    names = {}
    for path in CLI.rglob("*.py"):
        parts = ["convection", *path.relative_to(CLI.parent).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    edges: dict[str, set[str]] = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found |= {f"{node.module}.{alias.name}" for alias in node.names}
        edges[name] = {n for n in found if n in names and n != name}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges[start] - seen:
            seen.add(nxt)
            if nxt == goal or reaches(nxt, goal, seen):
                return True
        return False

    assert [n for n in sorted(names) if reaches(n, n, set())] == []
