"""Real parts for the action tests: the sshd hosts of tests/software (the
same fixtures, loaded from that conftest), a loopback HTTP server and an
aiosmtpd server, both in threads."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from convection.common import Limits
from convection.common.egress import EgressPolicy
from convection.workflows import RunContext

_spec = importlib.util.spec_from_file_location(
    "_software_conftest", Path(__file__).parents[2] / "software" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_software = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _software  # its dataclasses look their module up
_spec.loader.exec_module(_software)

ssh_keys = _software.ssh_keys
sshd_hosts = _software.sshd_hosts
known_hosts = _software.known_hosts
make_host = _software.make_host

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


CTX = RunContext(
    execution_id="wf-ex-1",
    task_id="task-ex-1",
    action_execution_id="action-ex-1",
    task_name="t",
    workflow_name="wf",
    project="p",
    callback_url="/v2/action_executions/action-ex-1",
    # The test servers are on loopback: allowed as a user allows it.
    limits=Limits(egress=EgressPolicy(allow_loopback=True)),
)
