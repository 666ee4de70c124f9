"""``convection workflow|workbook|action create|update|list|show|delete|definition``
on a real SQLite store, with definitions written as Mistral users write
them, and Mistral's field names, messages and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from convection.cli.main import run
from convection.workflows import parse_workflows

VM_WORKFLOWS = """\
---
version: '2.0'

# Boots a server and waits for it.
create_vm:
  description: Create a server
  tags: [vm, nova]
  input:
    - vm_name
    - image_ref: cirros
    - flavor_ref: 1
  output:
    vm_id: <% $.vm_id %>
  tasks:
    create_server:
      action: std.echo output="<% $.vm_name %>"
      publish:
        vm_id: <% task().result %>
      on-success:
        - wait_for_instance
    wait_for_instance:
      action: std.noop

# Deletes it again.
delete_vm:
  input:
    - vm_id
  tasks:
    delete_server:
      action: std.noop
"""

ONE_WORKFLOW = """\
version: '2.0'
hello:
  input:
    - who: world
  tasks:
    greet:
      action: std.echo output="Hello, <% $.who %>"
"""

ONE_WORKFLOW_CHANGED = """\
version: '2.0'
hello:
  tags: [greeting]
  input:
    - who
    - greeting: Hi
  output:
    said: <% $.greeting %>
  tasks:
    greet:
      action: std.echo output="<% $.greeting %>, <% $.who %>"
"""

WORKBOOK = """\
version: '2.0'
name: vm_ops
description: Servers, start to end.
tags: [ops]

actions:
  say:
    base: std.echo
    base-input:
      output: <% $.text %>
    input:
      - text

workflows:
  boot:
    type: direct
    tasks:
      announce:
        action: say text="booting"
        on-success: [finish]
      finish:
        workflow: shutdown

  shutdown:
    tasks:
      halt:
        action: std.noop
"""

ACTIONS = """\
version: '2.0'
wait_ssh:
  description: Wait until a host answers on SSH.
  base: std.echo
  base-input:
    output: <% $.host %>
  input:
    - host
    - username: root
"""

ACTIONS_CHANGED = """\
version: '2.0'
wait_ssh:
  description: Wait for SSH, longer.
  base: std.echo
  base-input:
    output: <% $.host %>
  input:
    - host
    - username: admin
    - port: 22
"""


class CLI:
    def __init__(self, capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path) -> None:
        self.capsys = capsys
        self.db = db
        self.tmp = tmp_path

    def file(self, name: str, text: str) -> str:
        path = self.tmp / name
        path.write_text(text)
        return str(path)

    def __call__(self, *args: str, project: str = "default") -> tuple[int, str, str]:
        code = run(["--db", self.db, "--project", project, *args])
        out, err = self.capsys.readouterr()
        return code, out, err

    def json(self, *args: str, project: str = "default") -> Any:
        code, out, err = self(*args, "-f", "json", project=project)
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path) -> CLI:
    return CLI(capsys, db, tmp_path)


WORKFLOW_FIELDS = {
    "id", "name", "namespace", "input", "interface", "definition", "tags",
    "scope", "project_id", "created_at", "updated_at",
}  # fmt: skip


def test_create_list_show_update_delete(cli: CLI) -> None:
    created = cli.json("workflow", "create", cli.file("hello.yaml", ONE_WORKFLOW))
    assert len(created) == 1
    body = created[0]
    assert set(body) == WORKFLOW_FIELDS
    assert body["name"] == "hello" and body["namespace"] == "" and body["scope"] == "private"
    assert body["project_id"] == "default"
    assert body["input"] == 'who="world"'
    assert body["interface"] == {"input": [{"who": "world"}], "output": []}
    assert body["definition"] == ONE_WORKFLOW  # one workflow: the text as uploaded
    assert len(body["created_at"]) == 19 and body["created_at"][10] == " "  # 1970-01-01 00:00:00

    assert [w["name"] for w in cli.json("workflow", "list")] == ["hello"]
    by_id = cli.json("workflow", "show", body["id"])
    by_name = cli.json("workflow", "show", "hello")
    assert by_id == by_name and by_id["id"] == body["id"]
    code, out, _ = cli("workflow", "show", "hello")
    assert code == 0 and "Created at" in out and 'who="world"' in out

    updated = cli.json("workflow", "update", cli.file("hello2.yaml", ONE_WORKFLOW_CHANGED))
    assert updated[0]["id"] == body["id"]
    assert updated[0]["input"] == 'who, greeting="Hi"'
    assert updated[0]["interface"] == {"input": ["who", {"greeting": "Hi"}], "output": ["said"]}
    assert updated[0]["tags"] == ["greeting"]
    assert updated[0]["updated_at"] is not None
    code, out, _ = cli("workflow", "definition", "hello")
    assert code == 0 and out == ONE_WORKFLOW_CHANGED

    code, out, err = cli("workflow", "delete", "hello")
    assert code == 0 and "Request to delete workflow hello has been accepted." in out
    assert cli.json("workflow", "list") == []
    code, _, err = cli("workflow", "show", "hello")
    assert code == 1
    assert "Workflow not found [workflow_identifier=hello, namespace=]" in err


def test_a_document_of_two_workflows_is_two_definitions_each_with_its_text(cli: CLI) -> None:
    created = cli.json("workflow", "create", cli.file("vm.yaml", VM_WORKFLOWS))
    assert [w["name"] for w in created] == ["create_vm", "delete_vm"]
    texts = {}
    for name in ("create_vm", "delete_vm"):
        code, out, _ = cli("workflow", "definition", name)
        assert code == 0
        texts[name] = out
    # each is a document of its own: version and that workflow, comments kept
    assert texts["create_vm"].startswith("version: '2.0'\n# Boots a server")
    assert "delete_vm" not in texts["create_vm"] and "create_vm" not in texts["delete_vm"]
    assert "# Deletes it again." in texts["delete_vm"]
    whole, _ = parse_workflows(VM_WORKFLOWS)
    for spec in whole:
        alone, diags = parse_workflows(texts[spec.name])
        assert not diags.has_errors and alone == [spec]
    shown = cli.json("workflow", "show", "create_vm")
    assert shown["input"] == 'vm_name, image_ref="cirros", flavor_ref=1'
    assert shown["tags"] == ["vm", "nova"]
    assert shown["interface"]["output"] == ["vm_id"]


def test_a_workbooks_workflows_and_actions_get_qualified_names(cli: CLI) -> None:
    code, out, err = cli("workbook", "create", cli.file("wb.yaml", WORKBOOK), "-f", "json")
    assert code == 0, err
    workbook = json.loads(out)[0]
    assert set(workbook) == WORKFLOW_FIELDS - {"input", "interface"}
    assert workbook["name"] == "vm_ops" and workbook["tags"] == ["ops"]
    code, out, _ = cli("workbook", "definition", "vm_ops")
    assert out == WORKBOOK

    names = [w["name"] for w in cli.json("workflow", "list", "--sort-keys", "name")]
    assert names == ["vm_ops.boot", "vm_ops.shutdown"]
    code, boot, _ = cli("workflow", "definition", "vm_ops.boot")
    # cut out by indentation, as Mistral's _parse_def_from_wb does
    assert boot.startswith("boot:\n  type: direct\n  tasks:\n")
    assert "shutdown:\n  tasks" not in boot and boot.endswith("workflow: shutdown\n")

    actions = {a["name"]: a for a in cli.json("action", "list")}
    say = actions["vm_ops.say"]
    assert say["is_system"] is False and say["input"] == "text"
    assert say["definition"].startswith("say:\n  base: std.echo")
    assert actions["std.echo"]["is_system"] is True

    # update: the workbook's text and its items follow; same ids
    boot_id = cli.json("workflow", "show", "vm_ops.boot")["id"]
    changed = WORKBOOK.replace("tags: [ops]", "tags: [ops, v2]").replace("- text", "- text: hi")
    code, out, err = cli("workbook", "update", cli.file("wb2.yaml", changed), "-f", "json")
    assert code == 0, err
    assert json.loads(out)[0]["tags"] == ["ops", "v2"]
    assert cli.json("action", "show", "vm_ops.say")["input"] == 'text="hi"'
    assert cli.json("workflow", "show", "vm_ops.boot")["id"] == boot_id

    code, _, err = cli("workbook", "create", cli.file("wb.yaml", WORKBOOK))
    assert code == 1
    assert (
        "Duplicate entry for Workbook ['name', 'namespace', 'project_id']: vm_ops, , default" in err
    )

    code, out, _ = cli("workbook", "delete", "vm_ops")
    assert code == 0 and "Request to delete workbook vm_ops has been accepted." in out
    assert cli.json("workbook", "list") == []
    code, _, err = cli("workbook", "show", "vm_ops")
    assert code == 1 and "Workbook not found [workbook_name=vm_ops]" in err


def test_namespaces_keep_same_named_workflows_apart(cli: CLI) -> None:
    path = cli.file("hello.yaml", ONE_WORKFLOW)
    a = cli.json("workflow", "create", path, "--namespace", "team-a")[0]
    b = cli.json("workflow", "create", path, "--namespace", "team-b")[0]
    assert a["id"] != b["id"] and (a["namespace"], b["namespace"]) == ("team-a", "team-b")
    assert cli.json("workflow", "show", "hello", "--namespace", "team-b")["id"] == b["id"]
    listed = cli.json("workflow", "list", "--namespace", "team-a")
    assert [w["id"] for w in listed] == [a["id"]]
    assert len(cli.json("workflow", "list")) == 2

    code, _, err = cli("workflow", "show", "hello")  # the default namespace has none
    assert code == 1 and "[workflow_identifier=hello, namespace=]" in err
    code, _, err = cli("workflow", "create", path, "--namespace", "team-a")
    assert code == 1
    assert (
        "Duplicate entry for WorkflowDefinition ['name', 'namespace', 'project_id']: "
        "hello, team-a, default"
    ) in err

    code, _, _ = cli("workflow", "delete", "hello", "--namespace", "team-a")
    assert code == 0
    assert [w["id"] for w in cli.json("workflow", "list")] == [b["id"]]


def test_another_project_sees_nothing_private_and_cannot_touch_public(cli: CLI) -> None:
    cli.json("workflow", "create", cli.file("hello.yaml", ONE_WORKFLOW))
    cli.json("action", "create", cli.file("actions.yaml", ACTIONS))
    cli.json("workbook", "create", cli.file("wb.yaml", WORKBOOK))
    assert cli.json("workflow", "list", project="other") == []
    assert cli.json("workbook", "list", project="other") == []
    assert cli.json("action", "list", "--adhoc", project="other") == []
    code, _, err = cli("workflow", "show", "hello", project="other")
    assert code == 1 and "Workflow not found" in err
    # the other project may create its own of the same name
    mine = cli.json("workflow", "create", cli.file("hello.yaml", ONE_WORKFLOW), project="other")
    assert mine[0]["project_id"] == "other"
    cli("workflow", "delete", "hello", project="other")

    public = cli.json("workflow", "create", cli.file("vm.yaml", VM_WORKFLOWS), "--public")
    assert {w["scope"] for w in public} == {"public"}
    seen = cli.json("workflow", "list", project="other")
    assert sorted(w["name"] for w in seen) == ["create_vm", "delete_vm"]
    assert cli.json("workflow", "show", "create_vm", project="other")["project_id"] == "default"
    code, _, err = cli("workflow", "delete", "create_vm", project="other")
    assert code == 1
    assert (
        f"Can not access WorkflowDefinition resource of other projects, ID: {public[0]['id']}"
        in err
    )
    assert "Unable to delete the specified workflow(s)." in err
    assert len(cli.json("workflow", "list")) == 5  # hello, the workbook's two, these two


def test_ad_hoc_actions_beside_system_ones(cli: CLI) -> None:
    created = cli.json("action", "create", cli.file("actions.yaml", ACTIONS))
    body = created[0]
    assert set(body) == {
        "id", "name", "is_system", "input", "description", "tags", "definition",
        "scope", "project_id", "namespace", "created_at", "updated_at",
    }  # fmt: skip
    assert body["name"] == "wait_ssh" and body["is_system"] is False
    assert body["input"] == 'host, username="root"'
    assert body["description"] == "Wait until a host answers on SSH."
    assert body["definition"] == ACTIONS

    listed = {a["name"]: a for a in cli.json("action", "list")}
    assert listed["wait_ssh"]["is_system"] is False
    assert listed["std.noop"]["is_system"] is True
    assert [a["name"] for a in cli.json("action", "list", "--adhoc")] == ["wait_ssh"]
    assert "wait_ssh" not in {a["name"] for a in cli.json("action", "list", "--system")}
    code, out, _ = cli("action", "list")
    assert code == 0 and "wait_ssh" in out and "std.noop" in out

    updated = cli.json("action", "update", cli.file("actions2.yaml", ACTIONS_CHANGED))
    assert updated[0]["id"] == body["id"]
    assert updated[0]["input"] == 'host, username="admin", port=22'
    code, out, _ = cli("action", "definition", "wait_ssh")
    assert code == 0 and out == ACTIONS_CHANGED

    code, _, err = cli("action", "create", cli.file("actions.yaml", ACTIONS))
    assert code == 1 and "Duplicate entry for ActionDefinition" in err
    system = "version: '2.0'\nstd.echo:\n  base: std.noop\n"
    code, _, err = cli("action", "create", cli.file("echo.yaml", system))
    assert code == 1 and "Duplicate entry for ActionDefinition" in err and "std.echo" in err
    code, _, err = cli("action", "update", cli.file("echo.yaml", system))
    assert code == 1 and "Attempt to modify a system action: std.echo" in err
    code, _, err = cli("action", "delete", "std.echo")
    assert code == 1 and "Attempt to delete a system action: std.echo" in err

    code, out, _ = cli("action", "delete", "wait_ssh")
    assert code == 0 and "Request to delete action wait_ssh has been accepted." in out
    code, _, err = cli("action", "show", "wait_ssh")
    assert code == 1 and "Action definition not found [action_name=wait_ssh]" in err


def test_not_found_and_partial_deletes(cli: CLI) -> None:
    cli.json("workflow", "create", cli.file("vm.yaml", VM_WORKFLOWS))
    code, out, err = cli("workflow", "delete", "create_vm", "nope", "delete_vm")
    assert code == 1
    assert "Request to delete workflow create_vm has been accepted." in out
    assert "Request to delete workflow delete_vm has been accepted." in out
    assert "Workflow not found [workflow_identifier=nope, namespace=]" in err
    assert cli.json("workflow", "list") == []
    code, _, err = cli("workflow", "update", cli.file("hello.yaml", ONE_WORKFLOW))
    assert code == 1 and "Workflow not found [workflow_identifier=hello, namespace=]" in err
    code, _, err = cli("workbook", "update", cli.file("wb.yaml", WORKBOOK))
    assert code == 1 and "Workbook not found [workbook_name=vm_ops]" in err


def test_an_invalid_document_stores_nothing_and_says_where(cli: CLI) -> None:
    broken = VM_WORKFLOWS.replace("- wait_for_instance", "- wait_for_instanse")
    path = cli.file("vm.yaml", broken)
    code, _, err = cli("workflow", "create", path)
    assert code == 1
    assert f"{path}:" in err and "create_vm.tasks.create_server.on-success[0]" in err
    assert cli.json("workflow", "list") == []
    # one taken name refuses the whole document: nothing of it is stored
    cli.json("workflow", "create", cli.file("d.yaml", VM_WORKFLOWS.split("# Deletes")[0]))
    again = cli.file("vm2.yaml", VM_WORKFLOWS.replace("create_vm", "make_vm"))
    cli.json("workflow", "create", cli.file("x.yaml", ONE_WORKFLOW))
    both = cli.file("both.yaml", VM_WORKFLOWS)
    code, _, err = cli("workflow", "create", both)
    assert code == 1 and "create_vm" in err
    names = {w["name"] for w in cli.json("workflow", "list")}
    assert names == {"create_vm", "hello"}  # delete_vm was not created
    assert cli.json("workflow", "create", again)  # a document of free names goes in


def test_update_by_id_takes_one_workflow(cli: CLI) -> None:
    made = cli.json("workflow", "create", cli.file("vm.yaml", VM_WORKFLOWS))
    code, _, err = cli(
        "workflow", "update", cli.file("vm.yaml", VM_WORKFLOWS), "--id", made[0]["id"]
    )
    assert code == 1
    assert "More than one workflows are not supported for update with UUID provided." in err
    renamed = ONE_WORKFLOW.replace("hello:", "greeter:")
    body = cli.json("workflow", "update", cli.file("g.yaml", renamed), "--id", made[1]["id"])
    assert body[0]["id"] == made[1]["id"] and body[0]["name"] == "greeter"


def test_listing_pages_with_marker_and_limit(cli: CLI) -> None:
    for n in range(5):
        text = ONE_WORKFLOW.replace("hello:", f"wf{n}:")
        cli.json("workflow", "create", cli.file(f"wf{n}.yaml", text), *(["--public"] * (n % 2)))
    pages, marker = [], None
    while True:
        extra = ["--marker", marker] if marker else []
        page = cli.json("workflow", "list", "--sort-keys", "name", "--limit", "2", *extra)
        if not page:
            break
        pages.append([w["name"] for w in page])
        marker = page[-1]["id"]
    assert pages == [["wf0", "wf1"], ["wf2", "wf3"], ["wf4"]]
    desc = cli.json("workflow", "list", "--sort-keys", "name", "--sort-dirs", "desc")
    assert [w["name"] for w in desc] == ["wf4", "wf3", "wf2", "wf1", "wf0"]
    public = cli.json("workflow", "list", "--filter", "scope=public")
    assert [w["name"] for w in public] == ["wf1", "wf3"]
    code, _, err = cli("workflow", "list", "--sort-keys", "colour")
    assert code == 1 and "cannot sort workflows by ['colour']" in err


def test_graph_draws_a_stored_workflow(cli: CLI) -> None:
    cli.json("workflow", "create", cli.file("vm.yaml", VM_WORKFLOWS))
    cli.json("workbook", "create", cli.file("wb.yaml", WORKBOOK))
    graph = cli.json("workflow", "graph", "create_vm")
    assert graph["start"] == ["create_server"]
    edges = {(e["from"], e["to"]) for e in graph["edges"]}
    assert edges == {("create_server", "wait_for_instance")}
    wb_graph = cli.json("workflow", "graph", "vm_ops.boot")
    assert {(e["from"], e["to"]) for e in wb_graph["edges"]} == {("announce", "finish")}
    code, _, err = cli("workflow", "graph", "missing_wf")
    assert code == 1 and "Workflow not found [workflow_identifier=missing_wf" in err
