"""``convection cron-trigger ...`` on a real SQLite file: python-mistralclient's
tables, Mistral's bodies and messages, and ``--first-time`` read as local
time unless ``--utc``. (``test_remote_workflows.py`` runs the same commands
against a server and compares.)"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from .conftest import Cli

WORKFLOW = """\
version: '2.0'
greet:
  input: [who]
  tasks:
    hello:
      action: std.echo output="Hello, <% $.who %>"
"""

_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")

SHOWN = """\
┏━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ Field                ┃ Value                  ┃
┡━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━┩
│ ID                   │ <id>                   │
│ Name                 │ nightly                │
│ Workflow             │ greet                  │
│ Params               │ {"env": {"zone": "b"}} │
│ Pattern              │ 0 2 * * *              │
│ Next execution time  │ <time>                 │
│ Remaining executions │ 3                      │
│ Created at           │ <time>                 │
│ Updated at           │ <none>                 │
└──────────────────────┴────────────────────────┘
"""


def _masked(text: str) -> str:
    """Ids and times masked (tables are then compared cell by cell)."""
    return _TIME.sub("<time>", _ID.sub("<id>", text))


@pytest.fixture
def cli(cli: Cli, tmp_path: Path) -> Cli:
    """The commands on a store that holds ``greet``."""
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    assert cli("workflow", "create", str(path))[0] == 0
    return cli


def _rows(table: str) -> list[list[str]]:
    """A table's cells, row by row, without the rules."""
    return [
        [c.strip() for c in line.strip("│┃").split(line[0])]
        for line in table.splitlines()
        if line[:1] in "│┃"
    ]


def test_create_prints_mistralclients_fields(cli: Cli) -> None:
    code, out, err = cli(
        "cron-trigger", "create", "nightly", "greet", '{"who": "Ann"}', "--pattern", "0 2 * * *",
        "--count", "3", "--params", '{"env": {"zone": "b"}}',
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert _rows(_masked(out)) == _rows(SHOWN)
    code, out, _ = cli("cron-trigger", "list")
    header, row = _rows(_masked(out))
    assert header == ["ID", "Name", "Workflow", "Params", "Pattern", "Next execution time",
                      "Remaining executions", "Created at", "Updated at"]  # fmt: skip
    assert row == ["<id>", "nightly", "greet", '{"env": {"zone": "b"}}', "0 2 * * *", "<time>",
                   "3", "<time>", "<none>"]  # fmt: skip


def test_json_is_mistrals_body(cli: Cli) -> None:
    args = ("once", "greet", '{"who": "Bo"}', "--first-time", "2031-01-02 03:04", "--utc")
    code, out, _ = cli("cron-trigger", "create", *args, "-f", "json")
    body = json.loads(out)
    assert code == 0 and list(body) == [
        "id", "name", "pattern", "first_execution_time", "next_execution_time",
        "remaining_executions", "workflow_name", "workflow_id", "workflow_input",
        "workflow_params", "scope", "project_id", "created_at", "updated_at",
    ]  # fmt: skip
    assert body["first_execution_time"] == body["next_execution_time"] == "2031-01-02 03:04:00"
    assert (body["remaining_executions"], body["workflow_input"]) == (1, {"who": "Bo"})
    assert json.loads(cli("cron-trigger", "show", body["id"], "-f", "json")[1]) == body


def test_first_time_is_local_unless_utc(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        args = ("greet", '{"who": "Bo"}', "--first-time", "2031-07-01 12:00", "-f", "json")
        local = json.loads(cli("cron-trigger", "create", "paris", *args)[1])
        utc = json.loads(cli("cron-trigger", "create", "utc", *args, "--utc")[1])
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert local["first_execution_time"] == "2031-07-01 10:00:00"  # CEST is UTC+2
    assert utc["first_execution_time"] == "2031-07-01 12:00:00"


def test_mistrals_messages_and_exit_codes(cli: Cli) -> None:
    create = ("cron-trigger", "create", "t", "greet", '{"who": "x"}')
    assert cli(*create, "--pattern", "nope")[::2] == (
        1, "error: The specified pattern is not valid: nope\n1 error\n"
    )  # fmt: skip
    assert cli(*create)[2].startswith("error: Pattern or first_execution_time must be specified.")
    assert "at least 1 minute in the future" in cli(*create, "--first-time", "2001-01-01 00:00")[2]
    assert cli(*create, "--pattern", "@daily")[0] == 0
    taken = cli(*create, "--pattern", "@hourly")
    assert taken[::2] == (1, "error: Duplicate entry for cron trigger t: ['name', 'project_id']\n")
    assert cli("cron-trigger", "show", "nope")[::2] == (
        1, "error: Cron trigger not found [identifier=nope]\n"
    )  # fmt: skip
    deleted = cli("cron-trigger", "delete", "t", "nope")
    assert deleted == (
        1,
        "Request to delete cron trigger t has been accepted.\n",
        "Cron trigger not found [identifier=nope]\n"
        "Unable to delete the specified cron trigger(s).\n",
    )
