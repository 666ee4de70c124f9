"""Documents: version, YAML errors, the list of workflows and actions,
workbooks, and the limits on what one document holds."""

from __future__ import annotations

import textwrap

import pytest

from convection.common import InvalidInput, Limits
from convection.workflows import (
    REQUIRED,
    ActionSpec,
    WorkbookSpec,
    action_chain,
    lookup_order,
    parse_actions,
    parse_workbook,
    parse_workflows,
)
from convection.workflows.lang import documents, limits

from ._helpers import errors, fixture, located, one_error

MINIMAL = """\
version: '2.0'
wf:
  tasks:
    t1:
      action: std.noop
"""


@pytest.mark.parametrize("version", ["'2.0'", "2.0", "2", '"2"', "2.00"])
def test_versions_that_read_as_two_point_zero_are_accepted(version: str) -> None:
    specs, diags = parse_workflows(MINIMAL.replace("'2.0'", version))
    assert not diags.has_errors, located(diags)
    assert [s.name for s in specs] == ["wf"]


@pytest.mark.parametrize("version", ["'1.0'", "'3.0'", "v2", "''", "null", "true", "[2]"])
def test_other_versions_are_unsupported(version: str) -> None:
    text = MINIMAL.replace("'2.0'", version)
    one_error(parse_workflows, text, "1:1", "version", "Unsupported DSL version:")


def test_version_is_required_in_a_workflow_document() -> None:
    one_error(
        parse_workflows,
        "wf:\n  tasks:\n    t1:\n      action: std.noop\n",
        "1:1",
        "",
        "'version' is a required property",
    )


def test_an_empty_document_needs_a_version_and_a_workflow() -> None:
    assert errors(parse_workflows, "") == [
        "1:1 : 'version' is a required property: expected version: '2.0'",
        "1:1 : At least one item must be in the list: the document defines no workflow",
    ]


def test_yaml_errors_are_mistral_s_parse_errors_with_their_place() -> None:
    found = errors(parse_workflows, "version: '2.0'\nwf:\n  tasks: [a\n")
    assert len(found) == 1
    assert found[0].startswith("4:1 : Definition could not be parsed: ")


def test_a_tab_is_named_as_the_problem() -> None:
    found = errors(parse_workflows, "version: '2.0'\nwf:\n\ttasks: {}\n")
    assert found == [
        "3:1 : Definition could not be parsed: a tab character is not allowed here; "
        "YAML indentation must use spaces (while scanning for the next token)"
    ]


def test_a_document_that_is_not_a_mapping_is_refused() -> None:
    found = errors(parse_workflows, "- version: '2.0'\n")
    assert found == [
        "1:1 : Definition could not be parsed: the document is not a mapping "
        "(expected 'version' and named entries)"
    ]


def test_every_workflow_is_checked_and_every_error_listed() -> None:
    text = """\
        version: '2.0'
        first:
          tasks:
            a:
              action: std.noop
              on-success: missing
        second:
          type: circular
          tasks:
            b: {}
        third:
          tasks:
            c:
              actions: std.noop
        """
    found = errors(parse_workflows, text)
    assert [f.split(":")[0] + ":" + f.split(":")[1].split()[0] for f in found] == [
        "6:7",
        "8:3",
        "14:7",
    ]
    assert "Task 'missing' not found." in found[0]
    assert "'circular' is not one of ['reverse', 'direct']" in found[1]
    assert "('actions' was unexpected)" in found[2]
    assert "did you mean action?" in found[2]


def test_a_workflow_body_must_be_a_non_empty_mapping() -> None:
    one_error(
        parse_workflows,
        "version: '2.0'\nwf: just a string\n",
        "2:1",
        "wf",
        "is not of type 'object'",
    )


def test_several_workflows_in_one_document() -> None:
    text = MINIMAL + "other:\n  type: reverse\n  tasks:\n    t:\n      action: std.noop\n"
    specs, diags = parse_workflows(text)
    assert not diags.has_errors
    assert [(s.name, s.type) for s in specs] == [("wf", "direct"), ("other", "reverse")]


def test_the_number_of_workflows_is_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "MAX_WORKFLOWS_PER_DOCUMENT", 2)
    body = "  tasks:\n    t:\n      action: std.noop\n"
    text = "version: '2.0'\n" + "".join(f"w{i}:\n{body}" for i in range(3))
    assert errors(parse_workflows, text) == [
        "1:1 : the document defines 3 workflows, more than the limit of 2"
    ]


def test_the_document_size_limit_is_the_loader_s() -> None:
    specs, diags = parse_workflows(MINIMAL, limits=Limits(max_template_size=20))
    assert specs == []
    assert "exceeds maximum allowed size (20 bytes)" in located(diags)[0]


def test_limits_are_documented_constants() -> None:
    assert limits.MAX_TASKS_PER_WORKFLOW == 10_000
    assert limits.MAX_JOIN_TASK_NAME_LENGTH == 208


# Workbooks


def test_a_workbook_qualifies_its_workflows_and_actions() -> None:
    wb, diags = parse_workbook(fixture("sql_cluster_workbook.yaml"), "wb.yaml")
    assert not diags.has_errors, located(diags)
    assert isinstance(wb, WorkbookSpec)
    assert (wb.name, wb.description, wb.tags) == (
        "sql_cluster",
        "Build a SQL Server cluster across nodes.",
        ("sql",),
    )
    assert [w.qualified_name for w in wb.workflows] == [
        "sql_cluster.deploy",
        "sql_cluster.configure_node",
    ]
    assert [a.qualified_name for a in wb.actions] == [
        "sql_cluster.run_script",
        "sql_cluster.install_prerequisites",
    ]
    run_script = wb.actions[0]
    assert run_script.base == "std.ssh"
    assert run_script.base_input == {
        "host": "<% $.node %>",
        "cmd": "<% $.script %>",
        "password": "<% $.password %>",
        "username": "Administrator",
    }
    assert run_script.input == {"node": REQUIRED, "script": REQUIRED, "password": ""}
    assert run_script.output == "<% $.stdout %>"


def test_names_inside_a_workbook_are_looked_up_qualified_first() -> None:
    assert lookup_order("run_script", "sql_cluster") == ("sql_cluster.run_script", "run_script")
    assert lookup_order("std.echo", None) == ("std.echo",)
    wb, _ = parse_workbook(fixture("sql_cluster_workbook.yaml"))
    assert wb is not None
    known = {a.qualified_name: a for a in wb.actions}
    chain, runs = action_chain(wb.actions[1], known)
    assert [a.name for a in chain] == ["install_prerequisites", "run_script"]
    assert runs == "std.ssh"


def test_a_workbook_refuses_unknown_top_level_keys_and_needs_a_name() -> None:
    text = """\
        version: '2.0'
        description: no name
        triggers: {}
        workflows:
          wf:
            tasks:
              t:
                action: std.noop
        """
    assert errors(parse_workbook, text) == [
        "3:1 triggers: Additional properties are not allowed ('triggers' was unexpected): "
        "a workbook takes version, name, description, tags, workflows, actions",
        "1:1 : 'name' is a required property: a workbook needs a name",
    ]


def test_a_workbook_item_name_is_a_word() -> None:
    text = """\
        version: '2.0'
        name: wb
        workflows:
          version: '2.0'
          my-flow:
            tasks:
              t:
                action: std.noop
          my.flow:
            tasks:
              t:
                action: std.noop
        """
    one_error(parse_workbook, text, "9:3", "workflows.my.flow", "('my.flow' was unexpected)")


def test_a_workbook_version_is_checked_like_a_document_s() -> None:
    text = "version: 2.1\nname: wb\nworkflows:\n  wf:\n    tasks:\n      t: {action: std.noop}\n"
    one_error(parse_workbook, text, "1:1", "version", "Unsupported DSL version: 2.1")


def test_errors_inside_a_workbook_name_the_workbook_path() -> None:
    text = """\
        version: '2.0'
        name: wb
        workflows:
          deploy:
            tasks:
              install:
                action: std.noop
                on-success:
                  - configure
                  - cleanup
              configure:
                action: std.noop
        """
    one_error(
        parse_workbook,
        text,
        "10:13",
        "workflows.deploy.tasks.install.on-success[1]",
        "Task 'cleanup' not found.",
    )


# Ad-hoc actions


def test_ad_hoc_actions_document() -> None:
    specs, diags = parse_actions(fixture("adhoc_actions.yaml"), "actions.yaml")
    assert not diags.has_errors, located(diags)
    greet, loud, wait_ssh = specs
    assert (greet.base, greet.base_input, greet.input) == (
        "std.echo",
        {"output": "Hello, <% $.name %>!"},
        {"name": REQUIRED},
    )
    assert (loud.base, loud.base_input, loud.output) == (
        "greet",
        {"name": "WORLD"},
        "<% $.toUpper() %>",
    )
    assert wait_ssh.base_input["cmd"] == "ls -l"
    known = {s.qualified_name: s for s in specs}
    chain, runs = action_chain(loud, known)
    assert ([a.name for a in chain], runs) == (["loud_greet", "greet"], "std.echo")


def test_inline_base_parameters_win_over_base_input() -> None:
    text = """\
        version: '2.0'
        a:
          base: std.echo output="inline"
          base-input:
            output: written
            other: kept
        """
    specs, diags = parse_actions(textwrap.dedent(text))
    assert not diags.has_errors
    assert specs[0].base_input == {"output": "inline", "other": "kept"}


def test_an_ad_hoc_action_refuses_unknown_keys_and_needs_a_base() -> None:
    text = """\
        version: '2.0'
        a:
          input: [x]
          ouput: <% $ %>
        """
    assert errors(parse_actions, text) == [
        "4:3 a.ouput: Additional properties are not allowed ('ouput' was unexpected): "
        "an ad-hoc action takes base, base-input, input, output, description, tags; "
        "did you mean output?",
        "2:1 a: 'base' is a required property",
    ]


def test_a_cycle_in_an_ad_hoc_action_chain_is_refused() -> None:
    text = """\
        version: '2.0'
        first:
          base: second
        second:
          base: third x=1
        third:
          base: first
        outside:
          base: std.echo
        """
    found = errors(parse_actions, text)
    assert found == [
        "3:3 first.base: Found a cycle in an ad-hoc action chain "
        "[action_name=first, duplicate_action_name=first]",
        "5:3 second.base: Found a cycle in an ad-hoc action chain "
        "[action_name=second, duplicate_action_name=first]",
        "7:3 third.base: Found a cycle in an ad-hoc action chain "
        "[action_name=third, duplicate_action_name=first]",
    ]


def test_action_chain_raises_mistral_s_message_on_a_cycle() -> None:
    a = ActionSpec("a", base="b")
    b = ActionSpec("b", base="a")
    with pytest.raises(InvalidInput, match=r"Found a cycle in an ad-hoc action chain"):
        action_chain(a, {"a": a, "b": b})


def test_an_action_base_must_start_with_a_command() -> None:
    one_error(
        parse_actions,
        "version: '2.0'\na:\n  base: =x y\n",
        "3:3",
        "a.base",
        "Invalid action/workflow task property: =x y",
    )
