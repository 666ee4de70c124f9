"""Schemathesis against the server's own ``/openapi.json``: Heat's ``/v1``
and Mistral's ``/v2``, with a token of every role.

A real token-authenticated server (a subprocess, a SQLite store) serves
the document; every operation in it is fuzzed with cases that fit it
(positive) and cases that do not (negative), once with generated path
parameters and once aimed at rows that exist (a stack, its resource,
output and events, a software config, a workflow, an execution, its
task and action execution). Every response must pass schemathesis's
``not_a_server_error``, ``status_code_conformance``,
``content_type_conformance`` and ``response_schema_conformance``: no 5xx,
only statuses and media types the document declares, bodies that fit the
schemas it gives.

Project B's tokens, of every role, are then aimed at project A's rows
(and fuzz B's own listings): no response may carry any of A's ids, names
or canary values that the request did not itself send.

The fixture is never aimed at by a ``DELETE`` (generated ids only), so
the rows stay for every operation after it; nothing is skipped.

Bounded for CI: a few examples per operation and mode, derandomized
(the same cases every run), no shrinking; failures are gathered (the
first of each kind per operation, with a curl to replay it) and
reported together.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from convection.tokens._tokens import Role

from .conftest import AuthServer, settled, token_server, wait_for

#: Examples per operation: generated path parameters (positive, negative),
#: then aimed at the fixture's rows (positive, negative).
EXAMPLES = {"generated": (2, 2), "aimed": (3, 2)}
#: Project B's: aimed at A's rows, and B's own listings (fitting cases only).
ISOLATION = {"generated": (2, 0), "aimed": (2, 1)}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
ROLES = (Role.ADMIN, Role.MEMBER, Role.READER)

TEMPLATE = """\
heat_template_version: 2018-08-31
description: {canary}
parameters:
  word:
    type: string
    default: {canary}-param
resources:
  rand:
    type: OS::Heat::RandomString
    properties:
      length: 8
outputs:
  out:
    value: {{get_attr: [rand, value]}}
"""
WORKFLOW = """\
version: '2.0'
{name}:
  input:
    - word: {canary}-input
  tasks:
    one:
      action: std.echo output=<% $.word %>
"""


@dataclass
class Rows:
    """One project's rows, by the path parameter that names each."""

    project: str
    params: dict[str, str]
    #: Strings only this project's data holds (ids, names, canaries).
    secrets: set[str] = field(default_factory=set)

    def aimed(self, path: str, names: set[str]) -> dict[str, str]:
        """The fixture's value of each of ``names`` at ``path``."""
        known = dict(self.params)
        if path.startswith("/v2/actions"):
            known["identifier"] = "std.noop"
        elif path.startswith("/v2/cron_triggers"):
            known["identifier"] = self.params["cron_trigger"]
        elif path.startswith("/v2/workflows"):
            known["identifier"] = self.params["workflow"]
        elif path.startswith("/v2/environments"):
            known["name"] = self.params["environment"]
        elif path.startswith("/v2/workbooks"):
            known["name"] = "absent-book"
        return {name: known[name] for name in names if name in known}


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """A token-authenticated server of this module's own: fuzzing leaves
    rows behind that no other test should meet."""
    with token_server(tmp_path_factory.mktemp("api-fuzz")) as server:
        yield server


def _ok(response: httpx.Response) -> Any:
    assert response.status_code in (200, 201), (response.request.url, response.text)
    return response.json()


def _rows(server: AuthServer, project: str) -> Rows:
    """A stack, a software config, a workflow, an execution, a cron trigger
    and an environment in ``project``, made by a member."""
    canary = f"canary-{uuid.uuid4().hex[:12]}"
    token = server.mint(project, Role.MEMBER)
    headers = {"X-Auth-Token": token}
    v1 = httpx.Client(base_url=server.live.endpoint(project), headers=headers, timeout=30)
    v2 = httpx.Client(base_url=f"{server.live.url}/v2", headers=headers, timeout=30)
    with v1, v2:
        name = f"stack-{canary}"
        body = {"stack_name": name, "template": TEMPLATE.format(canary=canary)}
        stack_id = _ok(v1.post("/stacks", json=body))["stack"]["id"]
        stack = settled(v1, f"/stacks/{name}/{stack_id}")
        assert stack["stack_status"] == "CREATE_COMPLETE", stack
        [event, *_] = _ok(v1.get(f"/stacks/{name}/{stack_id}/events"))["events"]
        config = {"name": f"config-{canary}", "group": "script", "config": canary}
        config_id = _ok(v1.post("/software_configs", json=config))["software_config"]["id"]
        workflow = f"wf-{canary}"
        text = WORKFLOW.format(name=workflow, canary=canary)
        created = v2.post("/workflows", content=text, headers={"Content-Type": "text/plain"})
        [wf] = _ok(created)["workflows"]
        execution = _ok(v2.post("/executions", json={"workflow_name": workflow}))

        def ended() -> bool:
            return bool(_ok(v2.get(f"/executions/{execution['id']}"))["state"] == "SUCCESS")

        wait_for(ended, "the fixture's execution")
        [task] = _ok(v2.get(f"/executions/{execution['id']}/tasks"))["tasks"]
        [action] = _ok(v2.get(f"/tasks/{task['id']}/action_executions"))["action_executions"]
        trigger = f"cron-{canary}"
        cron = {"name": trigger, "workflow_name": workflow, "pattern": "0 3 * * *"}
        _ok(v2.post("/cron_triggers", json=cron))
        environment = f"env-{canary}"
        _ok(v2.post("/environments", json={"name": environment, "variables": {"k": canary}}))
    params = {
        "tenant_id": project,
        "stack_name": name,
        "stack_id": stack_id,
        "resource_name": "rand",
        "output_key": "out",
        "event_id": event["id"],
        "type_name": "OS::Heat::RandomString",
        "version": "heat_template_version.2018-08-31",
        "config_id": config_id,
        "workflow": workflow,
        "execution_id": execution["id"],
        "task_id": task["id"],
        "action_execution_id": action["id"],
        "cron_trigger": trigger,
        "environment": environment,
    }
    secrets = {canary, stack_id, event["id"], config_id, wf["id"], execution["id"], task["id"]}
    secrets |= {action["id"], project}
    return Rows(project, params, secrets)


@pytest.fixture(scope="module")
def schema(fuzzed: AuthServer) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{fuzzed.live.url}/openapi.json")


@dataclass
class Findings:
    """The first failure of each kind per operation, as one report."""

    seen: dict[tuple[str, ...], str] = field(default_factory=dict)
    cases: int = 0

    def add(self, key: tuple[str, ...], text: str) -> None:
        self.seen.setdefault(key, text)

    def report(self) -> str:
        return f"{len(self.seen)} findings in {self.cases} cases:\n\n" + "\n\n".join(
            f"[{' | '.join(key)}]\n{text}" for key, text in sorted(self.seen.items())
        )


Inspect = Callable[[Case, Any], None]


def _fuzz(
    schema: schemathesis.BaseSchema,
    url: str,
    token: str,
    rows: Rows,
    findings: Findings,
    label: str,
    inspect: Inspect | None = None,
    aimed_at: Rows | None = None,
    examples: dict[str, tuple[int, int]] = EXAMPLES,
) -> None:
    """Every operation of the document, called with ``token``: generated,
    then aimed at ``aimed_at``'s rows (``rows``' own by default; never by a
    DELETE), with ``rows.project`` as the URL's project."""
    target = aimed_at or rows
    headers = {"X-Auth-Token": token}
    session = requests.Session()  # one connection, kept alive
    for result in schema.get_all_operations():
        operation = result.ok()
        names = {p.name for p in operation.path_parameters}
        own = {"tenant_id": rows.project} if "tenant_id" in names else {}
        runs: list[tuple[str, dict[str, str]]] = [("generated", own)]
        if operation.method.upper() != "DELETE" and names - {"tenant_id"}:
            runs.append(("aimed", {**target.aimed(operation.path, names), **own}))
        for kind, fixed in runs:
            positive, negative = examples[kind]
            # Only a query or a body can be made not to fit: a path
            # parameter is any string (and a header is the token).
            breakable = bool(list(operation.query)) or bool(list(operation.body))
            modes = [(GenerationMode.POSITIVE, positive)]
            modes += [(GenerationMode.NEGATIVE, negative)] if breakable and negative else []
            for mode, count in modes:
                strategy = operation.as_strategy(mode, path_parameters=fixed)
                where = (label, operation.label)
                _run(strategy, count, (url, session, headers), findings, where, inspect)


def _run(
    strategy: Any,
    count: int,
    to: tuple[str, requests.Session, dict[str, str]],
    findings: Findings,
    where: tuple[str, str],
    inspect: Inspect | None,
) -> None:
    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def one(case: Case) -> None:
        findings.cases += 1
        url, session, headers = to
        try:
            response = case.call(base_url=url, session=session, headers=headers, timeout=30)
        except Exception as exc:  # a dropped connection is a server failure too
            findings.add((*where, "transport"), f"{exc!r}\n{case.as_curl_command(headers)}")
            return
        try:
            case.validate_response(response, checks=CHECKS, headers=headers)
        except FailureGroup as group:
            for failure in group.exceptions:
                key = (*where, failure.title, str(response.status_code))
                findings.add(key, f"{failure.message}\n{case.as_curl_command(headers)}")
        if inspect is not None:
            inspect(case, response)

    with contextlib.suppress(Unsatisfiable):  # nothing to break: all fixed or free-form
        one()


@pytest.mark.parametrize("role", ROLES, ids=str)
def test_every_operation_conforms(
    role: Role, fuzzed: AuthServer, schema: schemathesis.BaseSchema
) -> None:
    rows = _rows(fuzzed, f"p-fuzz-{role}")
    findings = Findings()
    _fuzz(schema, fuzzed.live.url, fuzzed.mint(rows.project, role), rows, findings, str(role))
    assert not findings.seen, findings.report()


def _sent(case: Case, response: Any) -> str:
    request = response.request
    body = request.body or b""
    return str(request.url) + (body.decode("utf-8", "replace") if isinstance(body, bytes) else body)


def test_no_response_reveals_another_projects_rows(
    fuzzed: AuthServer, schema: schemathesis.BaseSchema
) -> None:
    a = _rows(fuzzed, "p-fuzz-owner")
    b = Rows("p-fuzz-other", {"tenant_id": "p-fuzz-other"})
    findings = Findings()

    def no_leak(case: Case, response: Any) -> None:
        text = response.text
        sent = _sent(case, response)
        leaked = sorted(s for s in a.secrets if s in text and s not in sent)
        if leaked:
            key = ("isolation", case.operation.label, str(response.status_code))
            findings.add(key, f"{leaked} in {text[:500]}\n{case.as_curl_command()}")

    for role in ROLES:
        token = fuzzed.mint(b.project, role)
        label = f"B {role}"
        _fuzz(schema, fuzzed.live.url, token, b, findings, label, no_leak, a, ISOLATION)
    # A's rows are all still there: the fuzzing above reached them.
    with fuzzed.client(a.project, fuzzed.mint(a.project, Role.READER)) as http:
        shown = http.get(f"/stacks/{a.params['stack_name']}/{a.params['stack_id']}")
        assert shown.status_code == 200, shown.text
    assert not findings.seen, findings.report()


def test_the_document_lists_only_the_apis(schema: schemathesis.BaseSchema) -> None:
    """The dashboard stays out of the document (and so out of the fuzzing)."""
    paths = {result.ok().path for result in schema.get_all_operations()}
    assert paths and all(p.startswith(("/v1/", "/v2")) or p in ("/", "/healthz") for p in paths)
