"""``convection environment ...`` on a real SQLite file: files read as
python-mistralclient reads them (JSON or YAML), its tables (Variables as
JSON indented by 4), Mistral's bodies and messages, and an execution that
names an environment getting its variables as ``env()``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .conftest import Cli

ENVIRONMENT = """\
name: prod
description: Production.
variables:
  greeting: hello from prod
  size: 3
"""

NEEDS_ENV = """\
version: '2.0'
needs_env:
  output:
    said: <% $.said %>
  tasks:
    say:
      action: std.echo output="<% env().greeting %>"
      publish:
        said: <% task().result %>
"""

SHOWN = """\
┏━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ Field       ┃ Value                             ┃
┡━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ Name        │ prod                              │
│ Description │ Production.                       │
│ Variables   │ {                                 │
│             │     "greeting": "hello from prod", │
│             │     "size": 3                     │
│             │ }                                 │
│ Scope       │ private                           │
│ Created at  │ <time>                            │
│ Updated at  │ <none>                            │
└─────────────┴───────────────────────────────────┘
"""

_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def _file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _cells(table: str) -> list[list[str]]:
    """A table's cells, row by row, with times masked and the rules left out."""
    rows = [line for line in _TIME.sub("<time>", table).splitlines() if line[:1] in "│┃"]
    return [[c.strip() for c in row.strip("│┃").split(row[0])] for row in rows]


def test_create_show_and_list_print_mistralclients_columns(cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("environment", "create", _file(tmp_path, "env.yaml", ENVIRONMENT))
    assert (code, err) == (0, "")
    assert _cells(out) == _cells(SHOWN)
    assert _cells(cli("environment", "show", "prod")[1]) == _cells(SHOWN)
    header, row = _cells(cli("environment", "list")[1])
    assert header == ["Name", "Description", "Scope", "Created at", "Updated at"]
    assert row == ["prod", "Production.", "private", "<time>", "<none>"]


def test_update_takes_json_and_json_output_is_mistrals_body(cli: Cli, tmp_path: Path) -> None:
    assert cli("environment", "create", _file(tmp_path, "env.yaml", ENVIRONMENT))[0] == 0
    changed = {"name": "prod", "variables": {"greeting": "hi"}, "scope": "public"}
    path = _file(tmp_path, "env.json", json.dumps(changed))
    code, out, _ = cli("environment", "update", path, "-f", "json")
    body = json.loads(out)
    assert code == 0 and list(body) == ["id", "name", "description", "variables", "scope",
                                        "project_id", "created_at", "updated_at"]  # fmt: skip
    assert (body["variables"], body["scope"], body["description"]) == (
        {"greeting": "hi"}, "public", "Production."
    )  # fmt: skip
    assert body["updated_at"] is not None


def test_an_execution_naming_it_gets_its_variables(cli: Cli, tmp_path: Path) -> None:
    assert cli("environment", "create", _file(tmp_path, "env.yaml", ENVIRONMENT))[0] == 0
    assert cli("workflow", "create", _file(tmp_path, "wf.yaml", NEEDS_ENV))[0] == 0
    code, out, _ = cli("execution", "create", "needs_env", "--param", "env=prod", "--wait")
    assert code == 0 and "hello from prod" in out


def test_mistrals_messages_and_exit_codes(cli: Cli, tmp_path: Path) -> None:
    path = _file(tmp_path, "env.yaml", ENVIRONMENT)
    assert cli("environment", "update", path)[::2] == (
        1, "error: Environment not found [name=prod]\n"
    )  # fmt: skip
    assert cli("environment", "create", path)[0] == 0
    assert cli("environment", "create", path)[::2] == (
        1, "error: Duplicate entry for Environment: ['name', 'project_id']\n"
    )  # fmt: skip
    bad = cli("environment", "create", _file(tmp_path, "bad.yaml", "name: x\ncolour: blue\n"))
    assert bad[0] == 1 and "Only: ['name', 'description', 'variables', 'scope']" in bad[2]
    listed = cli("environment", "create", _file(tmp_path, "list.yaml", "- name: x\n"))
    assert listed[::2] == (1, "error: FILE: expected a JSON object, not a list\n1 error\n")
    assert cli("environment", "delete", "prod", "nope") == (
        1,
        "Request to delete environment prod has been accepted.\n",
        "Environment not found [name=nope]\nUnable to delete the specified environment(s).\n",
    )
