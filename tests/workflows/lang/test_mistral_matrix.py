"""What Mistral's own spec tests accept and refuse (mistral/tests/unit/lang/v2/
test_tasks.py, test_workflows.py), case by case: the same documents, built
the same way (a base workflow of three tasks plus a change, dumped with
``yaml.safe_dump``), must be accepted or refused as there.

Where Convection refuses more than Mistral, the case is in
``test_stricter`` with the reason."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from convection.workflows import parse_workflows

from ._helpers import located

TASKS: dict[str, Any] = {
    "get": {"action": "std.http", "input": {"url": "https://www.openstack.org"}},
    "echo": {"action": "std.echo", "input": {"output": "This is a test."}},
    "email": {
        "action": "std.email",
        "input": {
            "from_addr": "mistral@example.com",
            "to_addrs": ["admin@example.com"],
            "subject": "Test",
            "body": "This is a test.",
            "smtp_server": "localhost",
            "smtp_password": "password",
        },
    },
}


def merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    for key, value in right.items():
        if isinstance(left.get(key), dict) and isinstance(value, dict):
            merge(left[key], value)
        else:
            left[key] = value
    return left


def refused(changes: dict[str, Any], *, add_tasks: bool = True) -> bool:
    doc: dict[str, Any] = {"version": "2.0", "test": {"type": "direct"}}
    if add_tasks:
        doc["test"]["tasks"] = copy.deepcopy(TASKS)
    merge(doc, copy.deepcopy(changes))
    specs, diags = parse_workflows(yaml.safe_dump(doc, default_flow_style=False))
    assert bool(specs) != diags.has_errors, located(diags)
    return diags.has_errors


def case(change: dict[str, Any], error: bool, **kw: Any) -> Any:
    return pytest.param(change, error, kw, id=f"{change}-{'refused' if error else 'accepted'}")


def task(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"test": {"tasks": {name: body}}}


def only(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"test": {"tasks": {name: body}}}


MATRIX = [
    # workflow types
    case({"test": {"type": "direct"}}, False),
    case({"test": {"type": "reverse"}}, False),
    case({"test": {"type": "circular"}}, True),
    case({"test": {"type": None}}, True),
    # versions
    case({"version": None}, True),
    case({"version": ""}, True),
    case({"version": "2.0"}, False),
    case({"version": 2.0}, False),
    case({"version": 2}, False),
    # inputs
    case({"test": {"input": ["var1", "var2"]}}, False),
    case({"test": {"input": ["var1", "var1"]}}, True),
    case({"test": {"input": [12345]}}, True),
    case({"test": {"input": [None]}}, True),
    case({"test": {"input": [""]}}, True),
    case({"test": {"input": None}}, True),
    case({"test": {"input": []}}, True),
    case({"test": {"input": ["var1", {"var2": 2}]}}, False),
    case({"test": {"input": [{"var1": 1}, {"var2": 2}]}}, False),
    case({"test": {"input": [{"var1": None}]}}, False),
    case({"test": {"input": [{"var1": 1}, {"var1": 1}]}}, True),
    case({"test": {"input": [{"var1": 1, "var2": 2}]}}, True),
    # outputs and vars
    case({"test": {"output": {"k1": "a", "k2": 1, "k3": True, "k4": None}}}, False),
    case({"test": {"output": {"k1": "<% $.v1 %>"}}}, False),
    case({"test": {"output": {"k1": "<% 1 + 2 %>"}}}, False),
    case({"test": {"output": {"k1": "<% * %>"}}}, True),
    case({"test": {"output": []}}, True),
    case({"test": {"output": "whatever"}}, True),
    case({"test": {"output": None}}, True),
    case({"test": {"output": {}}}, True),
    case({"test": {"vars": {"v1": "{{ _.input_var1 }}"}}}, False),
    case({"test": {"vars": {"v1": "{{ * }}"}}}, True),
    case({"test": {"vars": {}}}, True),
    # tags
    case({"test": {"tags": ""}}, True),
    case({"test": {"tags": []}}, True),
    case({"test": {"tags": [""]}}, True),
    case({"test": {"tags": ["tag"]}}, False),
    case({"test": {"tags": ["tag", "tag"]}}, True),
    case({"test": {"tags": None}}, True),
    # tasks
    case({"test": {"tasks": {}}}, True, add_tasks=False),
    case({"test": {"tasks": None}}, True, add_tasks=False),
    case({"test": {"tasks": TASKS}}, False, add_tasks=False),
    case({"test": {"type": "direct"}}, True, add_tasks=False),
    # action or workflow
    case(only("task1", {"action": "std.noop"}), False, add_tasks=False),
    case(
        only("task1", {"action": 'std.http url="openstack.org" timeout=10'}), False, add_tasks=False
    ),
    case(
        only("task1", {"action": "std.http url=<% $.url %> timeout=<% $.t %>"}),
        False,
        add_tasks=False,
    ),
    case(only("task1", {"action": "std.http url=<% * %>"}), True, add_tasks=False),
    case(only("task1", {"action": "std.http url={{ _.url }}"}), False, add_tasks=False),
    case(only("task1", {"workflow": 'test.wf k1="v1" k2="v2"'}), False, add_tasks=False),
    case(only("task1", {"workflow": "test.wf k1=<% * %>"}), True, add_tasks=False),
    case(only("task1", {"action": "std.noop", "workflow": "test.wf"}), True, add_tasks=False),
    case(only("task1", {"action": 123}), True, add_tasks=False),
    case(only("task1", {"workflow": 123}), True, add_tasks=False),
    case(only("task1", {"action": ""}), True, add_tasks=False),
    case(only("task1", {"action": None}), True, add_tasks=False),
    # task input
    case(only("task1", {"action": "test.mock", "input": ""}), True, add_tasks=False),
    case(only("task1", {"action": "test.mock", "input": {}}), True, add_tasks=False),
    case(only("task1", {"action": "test.mock", "input": None}), True, add_tasks=False),
    case(only("task1", {"action": "test.mock", "input": {"k1": "v1"}}), False, add_tasks=False),
    case(only("task1", {"action": "test.mock", "input": {"k1": "<% * %>"}}), True, add_tasks=False),
    case(only("task1", {"action": "test.mock", "input": {"k1": "{{ * }}"}}), True, add_tasks=False),
    # with-items
    case(task("get", {"with-items": ""}), True),
    case(task("get", {"with-items": []}), True),
    case(task("get", {"with-items": [""]}), True),
    case(task("get", {"with-items": None}), True),
    case(task("get", {"with-items": 12345}), True),
    case(task("get", {"with-items": "x in y"}), True),
    case(task("get", {"with-items": "<% $.y %>"}), True),
    case(task("get", {"with-items": "x in <% $.y %>"}), False),
    case(task("get", {"with-items": ["x in [1, 2, 3]"]}), False),
    case(task("get", {"with-items": ["x in <% $.y %>", "i in [1, 2, 3]"]}), False),
    case(task("get", {"with-items": ["x in <% $.y %>", "i in <% $.j %>"]}), False),
    case(task("get", {"with-items": ["x in <% * %>"]}), True),
    case(task("get", {"with-items": "{{ _.y }}"}), True),
    case(task("get", {"with-items": "x in {{ _.y }}"}), False),
    case(task("get", {"with-items": ["x in {{ _.y }}", "i in {{ * }}"]}), True),
    # publish
    case(only("task1", {"action": "test.mock", "publish": ""}), True, add_tasks=False),
    case(only("task1", {"action": "test.mock", "publish": {}}), True, add_tasks=False),
    case(only("task1", {"action": "test.mock", "publish": {"k1": "v1"}}), False, add_tasks=False),
    case(
        only("task1", {"action": "test.mock", "publish": {"k1": "<% * %>"}}), True, add_tasks=False
    ),
    # policies
    case(task("get", {"retry": {"count": 3, "delay": 1}}), False),
    case(
        task(
            "get",
            {"retry": {"continue-on": "<% 1 %>", "delay": 2, "break-on": "<% 1 %>", "count": 2}},
        ),
        False,
    ),
    case(task("get", {"retry": {"count": "<% 3 %>", "delay": 1}}), False),
    case(task("get", {"retry": {"count": "<% * %>", "delay": 1}}), True),
    case(task("get", {"retry": {"count": 3, "delay": "{{ * }}"}}), True),
    case(task("get", {"retry": {"count": -3, "delay": 1}}), True),
    case(task("get", {"retry": {"count": 3, "delay": -1}}), True),
    case(task("get", {"retry": {"count": "3", "delay": 1}}), True),
    case(task("get", {"retry": {"count": 3, "delay": "1"}}), True),
    case(task("get", {"retry": "count=3 delay=1 break-on=<% false %>"}), False),
    case(task("get", {"retry": "count=3 delay=1 break-on={{ false }}"}), False),
    case(task("get", {"retry": "count=3 delay=1"}), False),
    case(task("get", {"retry": "coun=3 delay=1"}), True),
    case(task("get", {"retry": None}), True),
    case(task("get", {"wait-before": 1}), False),
    case(task("get", {"wait-before": "<% 1 %>"}), False),
    case(task("get", {"wait-before": "<% * %>"}), True),
    case(task("get", {"wait-before": -1}), True),
    case(task("get", {"wait-before": 1.0}), True),
    case(task("get", {"wait-before": "1"}), True),
    case(task("get", {"wait-after": "{{ 1 }}"}), False),
    case(task("get", {"timeout": 300}), False),
    case(task("get", {"timeout": 300.0}), True),
    case(task("get", {"timeout": "300"}), True),
    case(task("get", {"pause-before": False}), False),
    case(task("get", {"pause-before": "<% False %>"}), False),
    case(task("get", {"pause-before": "False"}), True),
    case(task("get", {"concurrency": 10}), False),
    case(task("get", {"concurrency": -10}), True),
    case(task("get", {"concurrency": "10"}), True),
    case(task("get", {"fail-on": "<% $.x > 1 %>"}), False),
    case(task("get", {"fail-on": "yes please"}), True),
    # transitions
    case(task("get", {"on-success": ["email"]}), False),
    case(task("get", {"on-success": [{"email": "<% 1 %>"}]}), False),
    case(task("get", {"on-success": [{"email": "<% 1 %>"}, "echo"]}), False),
    case(task("get", {"on-success": [{"email": "<% $.v1 in $.v2 %>"}]}), False),
    case(task("get", {"on-success": [{"email": "<% * %>"}]}), True),
    case(task("get", {"on-success": [{"email": "{{ _.v1 in _.v2 }}"}]}), False),
    case(task("get", {"on-success": "email"}), False),
    case(task("get", {"on-success": None}), True),
    case(task("get", {"on-success": [""]}), True),
    case(task("get", {"on-success": []}), True),
    case(task("get", {"on-success": ["email", "email"]}), True),
    case(task("get", {"on-success": ["email", 12345]}), True),
    case(task("get", {"on-error": [{"email": "{{ * }}"}]}), True),
    case(task("get", {"on-complete": ["email", "email"]}), True),
    # keep-result
    case(task("email", {"keep-result": ""}), True),
    case(task("email", {"keep-result": []}), True),
    case(task("email", {"keep-result": "asd"}), True),
    case(task("email", {"keep-result": None}), True),
    case(task("email", {"keep-result": 12345}), True),
    case(task("email", {"keep-result": True}), False),
    case(task("email", {"keep-result": False}), False),
    case(task("email", {"keep-result": "<% 'a' in $.val %>"}), False),
    case(task("email", {"keep-result": "{{ * }}"}), True),
    # safe-rerun in task-defaults and tasks
    case({"test": {"task-defaults": {"safe-rerun": True}}}, False),
    case({"test": {"task-defaults": {"safe-rerun": "<% false %>"}}}, False),
    case({"test": {"task-defaults": {"safe-rerun": None}}}, True),
    case({"test": {"task-defaults": {"requires": ""}}}, True),
    case({"test": {"task-defaults": {"requires": "echo"}}}, False),
    case({"test": {"task-defaults": {"on-success": ["email", 12345]}}}, True),
    case({"test": {"task-defaults": {"retry": {"count": 3, "delay": "1"}}}}, True),
    case({"test": {"task-defaults": {"unknown": 1}}}, True),
    # an unknown task key is refused, an unknown workflow key is not
    case(task("get", {"retries": 3}), True),
    case({"test": {"whatever": 1}}, False),
    # direct-only and reverse-only keys
    case(task("email", {"requires": ["echo", "get"]}), True),
    case(
        {"test": {"type": "reverse", "tasks": {"email": {"requires": ["echo", "get"]}}}},
        False,
    ),
    case(
        {"test": {"type": "reverse", "tasks": {"email": {"join": "all"}}}},
        True,
    ),
]


@pytest.mark.parametrize(("change", "error", "kw"), MATRIX)
def test_as_mistral_s_spec_tests(change: dict[str, Any], error: bool, kw: dict[str, Any]) -> None:
    assert refused(change, **kw) is error


JOIN = {"get": {"on-success": ["email"]}, "echo": {"on-success": ["email"]}}


@pytest.mark.parametrize(
    ("join", "error"),
    [
        ("", True),
        (None, True),
        ("all", False),
        ("one", False),
        (0, False),
        (2, False),
        (3, True),
        ("3", True),
        (-3, True),
    ],
)
def test_join_values_and_inbound_counts(join: Any, error: bool) -> None:
    changes = {"test": {"tasks": {**JOIN, "email": {"join": join}}}}
    assert refused(changes) is error


@pytest.mark.parametrize(
    ("tasks", "error"),
    [
        ({"task3": {"join": 2}}, False),
        ({"task3": {"join": 5}}, True),
        ({"task3": {"join": "one"}}, False),
        ({"task4": {"join": "all"}}, True),
        ({"task4": {"join": 1}}, True),
    ],
)
def test_join_needs_enough_inbound_tasks(tasks: dict[str, Any], error: bool) -> None:
    base = {"task1": {"on-complete": "task3"}, "task2": {"on-complete": "task3"}}
    changes = {"test": {"tasks": {**base, **tasks}}}
    assert refused(changes, add_tasks=False) is error


def test_task_names_with_symbols_are_accepted() -> None:
    names = ["t1-task", "t2-task", "t3.task", "t4,task", "t5+task", "t6$task", "t7%task"]
    tasks = {
        name: {"action": "std.noop", "on-success": [following]}
        for name, following in zip(names, [*names[1:], "t8^task"], strict=True)
    }
    tasks["t8^task"] = {"action": "std.noop"}
    assert not refused({"test": {"tasks": tasks}}, add_tasks=False)


def test_a_uuid_is_not_a_workflow_name() -> None:
    doc = {
        "version": "2.0",
        "b98180ba-48a0-4e26-ab2e-50dc224f6fd1": {"tasks": {"t1": {"action": "std.noop"}}},
    }
    _, diags = parse_workflows(yaml.safe_dump(doc))
    assert located(diags) == [
        "1:1 b98180ba-48a0-4e26-ab2e-50dc224f6fd1: Workflow name cannot be in the format of UUID."
    ]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"test": {"input": ["var1", {"var1": 2}]}}, "a name declared twice"),
        (task("get", {"with-items": ["x in [1]", "x in [2]"]}), "a with-items variable twice"),
        (
            {
                "test": {
                    "type": "reverse",
                    "tasks": {"a": {"requires": "b"}, "b": {"requires": "a"}},
                }
            },
            "a reverse workflow whose requires loop can never run its looping tasks",
        ),
    ],
)
def test_stricter(change: dict[str, Any], why: str) -> None:
    """Mistral accepts these and fails (or silently drops a value) later."""
    assert refused(change, add_tasks="requires" not in str(change)), why
