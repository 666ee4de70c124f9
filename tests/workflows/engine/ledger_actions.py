"""``test.ledger``: an action that records each of its runs in a ledger file.

The crash trials (``test_crash.py``) copy this module into a directory of
their own, beside a ``ledger_actions-0.dist-info`` that declares it in the
``convection.actions`` entry point group, and put that directory on the
``PYTHONPATH`` of the engine processes: the action reaches them as any
installed plugin does (``registry.default_registry``).

Each run appends ``start`` when it begins and ``done`` (or ``fail``) just
before it returns, one line each, written with ``O_APPEND`` and fsynced, so
a line in the file is a run that happened, whatever killed the process a
moment later. A line is ``event<TAB>key<TAB>action_execution_id<TAB>task``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from convection.workflows.actions import (
    ActionContext,
    ActionPlugin,
    Failure,
    InputParam,
    Outcome,
    Success,
)

EVENTS = ("start", "done", "fail")


def append(path: str, *fields: str) -> None:
    """One line, durably, at the end of ``path`` (concurrent writers too)."""
    line = ("\t".join(fields) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read(path: Path) -> list[tuple[str, str, str, str]]:
    """The ledger's lines as (event, key, action_execution_id, task)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        event, key, aid, task = line.split("\t")
        out.append((event, key, aid, task))
    return out


class LedgerAction(ActionPlugin):
    """``test.ledger``: hold ``seconds``, then succeed with ``key``; with
    ``fail_once`` (a flag file's path), fail the first time the flag is not
    there (making it), so a retry succeeds."""

    name: ClassVar[str] = "test.ledger"
    description: ClassVar[str] = "Record each run in a ledger file (crash trials)."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "path": InputParam("string", required=True),
        "key": InputParam("string", required=True),
        "seconds": InputParam("number", default=0),
        "fail_once": InputParam(("string", "null")),
    }
    #: Never twice: the engine records it RUNNING before it starts.
    safe_to_rerun: ClassVar[bool] = False

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        path, key = str(params["path"]), str(params["key"])
        who = (ctx.action_execution_id, ctx.task_name or "")
        append(path, "start", key, *who)
        if params.get("seconds"):
            await asyncio.sleep(float(params["seconds"]))
        flag = params.get("fail_once")
        if flag and not os.path.exists(flag):
            Path(flag).touch()
            append(path, "fail", key, *who)
            return Failure(f"{key} fails the first time")
        append(path, "done", key, *who)
        return Success(key)


ACTIONS = (LedgerAction,)
