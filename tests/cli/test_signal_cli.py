"""``convection stack resource signal`` against a wait condition handle:
clear errors, right exit codes, no tracebacks (in-process CLI, real SQLite)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from convection.cli.main import run
from convection.service.stacks import Stacks
from convection.store.sql import SQLStore

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
  wc:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, timeout: 60, count: 2}
"""


@pytest.fixture
def stacks(db: str) -> Iterator[Stacks]:
    store = SQLStore(db)
    yield Stacks(store)
    store.close()


def cli(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str, str]:
    code = run(["--db", db, *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def signal(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str]:
    code, _, err = cli(capsys, db, "stack", "resource", "signal", "s", *args)
    return code, err


def waiting(stacks: Stacks) -> bool:
    return str(stacks.resource("default", "s", "wc")["resource_status"]) == "CREATE_IN_PROGRESS"


def test_signal_errors_and_success(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path, stacks: Stacks
) -> None:
    template = tmp_path / "t.yaml"
    template.write_text(TEMPLATE)
    assert cli(capsys, db, "stack", "create", "-t", str(template), "s")[0] == 0

    code, err = signal(capsys, db, "handle")
    assert code == 1 and "handle has not been created yet" in err  # no engine ran yet

    stacks.run_engine(until=lambda: waiting(stacks), timeout=60)

    code, err = signal(capsys, db, "wc", "--data", "{}")
    assert code == 1 and "Resource wc (OS::Heat::WaitCondition) does not accept signals" in err
    code, err = signal(capsys, db, "nope")
    assert code == 1 and "The Resource (nope) could not be found" in err
    code, err = signal(capsys, db, "handle", "--data", "{status: SUCCESS}")
    assert code == 1 and "Data should be in JSON format" in err
    code, err = signal(capsys, db, "handle", "--data", '["SUCCESS"]')
    assert code == 1 and "Data should be a JSON dict" in err
    code, err = signal(capsys, db, "handle", "--data", '{"status": "OK"}')
    assert code == 1
    assert "resources.handle: Metadata format invalid: status 'OK' is not one of" in err
    code, err = signal(capsys, db, "handle", "--data", '{"state": "up"}')
    assert code == 1 and "unknown keys ['state']" in err

    assert signal(capsys, db, "handle", "--data", '{"data": "a"}') == (0, "")
    body = tmp_path / "signal.json"
    body.write_text('{"reason": "from a file", "data": "b"}')
    assert signal(capsys, db, "handle", "--data-file", str(body)) == (0, "")

    stack_id = str(stacks.show("default", "s")["id"])
    assert stacks.wait(stack_id, timeout=60)["stack_status"] == "CREATE_COMPLETE"
    events = stacks.events("default", "s", resource_name="handle")
    signals = [
        e["resource_status_reason"] for e in events if e["resource_status"].startswith("SIGNAL")
    ]
    assert signals == [
        "Signal: status:SUCCESS reason:Signal 1 received",
        "Signal: status:SUCCESS reason:from a file",
    ]
