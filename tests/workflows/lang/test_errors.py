"""Each error names its place (line:column and the document path) and says
what Mistral says, then what was expected."""

from __future__ import annotations

import pytest

from convection.workflows import parse_workflows
from convection.workflows.lang import workflows

from ._helpers import errors, one_error


def test_unknown_task_key_is_refused_with_a_suggestion() -> None:
    text = """\
        version: '2.0'
        deploy:
          tasks:
            install:
              action: std.noop
              on_success: configure
            configure:
              action: std.noop
        """
    message = one_error(
        parse_workflows,
        text,
        "6:7",
        "deploy.tasks.install.on_success",
        "Additional properties are not allowed ('on_success' was unexpected)",
    )
    assert message.endswith("did you mean on-success?")


def test_direct_only_keys_in_a_reverse_workflow() -> None:
    text = """\
        version: '2.0'
        wf:
          type: reverse
          tasks:
            a:
              action: std.noop
              on-success: b
            b:
              join: all
              requires: a
        """
    assert errors(parse_workflows, text) == [
        "7:7 wf.tasks.a.on-success: Additional properties are not allowed ('on-success' was "
        "unexpected): 'on-success' belongs to direct workflows, and this one is reverse",
        "9:7 wf.tasks.b.join: Additional properties are not allowed ('join' was unexpected): "
        "'join' belongs to direct workflows, and this one is reverse",
    ]


def test_unknown_transition_target_in_a_list() -> None:
    text = """\
        version: '2.0'
        deploy:
          tasks:
            install:
              action: std.noop
              on-success:
                - configure
                - cleanup: <% $.done %>
            configure:
              action: std.noop
        """
    one_error(
        parse_workflows,
        text,
        "8:11",
        "deploy.tasks.install.on-success[1]",
        "Task 'cleanup' not found.",
    )


def test_unknown_target_in_the_advanced_form() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              on-complete:
                publish:
                  branch:
                    x: 1
                next:
                  - b
                  - c
            b: {action: std.noop}
        """
    one_error(
        parse_workflows, text, "11:13", "wf.tasks.a.on-complete.next[1]", "Task 'c' not found."
    )


def test_a_task_defaults_target_is_reported_once_at_its_place() -> None:
    text = """\
        version: '2.0'
        wf:
          task-defaults:
            on-error:
              - handle_errors
          tasks:
            a:
              on-success: b
            b:
              action: std.noop
            handle_error:
              action: std.noop
        """
    message = one_error(
        parse_workflows,
        text,
        "5:9",
        "wf.task-defaults.on-error[0]",
        "Task 'handle_errors' not found.",
    )
    assert "Did you mean handle_error?" in message


def test_an_engine_command_with_parameters_is_a_valid_target() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              on-success:
                - fail msg="stop here": <% $.stop %>
                - succeed msg=<% $.why %>
                - pause
                - noop
        """
    specs, diags = parse_workflows(text.replace("        ", "", 1).replace("\n        ", "\n"))
    assert not diags.has_errors, [str(d) for d in diags]
    got = [(t.target, t.condition, dict(t.params)) for t in specs[0].tasks["a"].next("success")]
    assert got == [
        ("fail", "<% $.stop %>", {"msg": "stop here"}),
        ("succeed", None, {"msg": "<% $.why %>"}),
        ("pause", None, {}),
        ("noop", None, {}),
    ]


def test_the_function_form_without_a_space_is_refused_as_mistral_refuses_it() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              on-error:
                - fail(msg="boom")
        """
    one_error(parse_workflows, text, "6:11", "wf.tasks.a.on-error[0]", "is valid under each of")


def test_the_function_form_with_a_space_is_read() -> None:
    text = "version: '2.0'\nwf:\n  tasks:\n    a:\n      on-error:\n        - fail(msg=<% $.x %>)\n"
    specs, diags = parse_workflows(text)
    assert not diags.has_errors
    transition = specs[0].tasks["a"].next("error")[0]
    assert (transition.target, dict(transition.params)) == ("fail", {"msg": "<% $.x %>"})


def test_a_guard_must_be_an_expression() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              on-success:
                - b: true
            b:
              action: std.noop
        """
    one_error(
        parse_workflows,
        text,
        "6:11",
        "wf.tasks.a.on-success[0].b",
        "the condition of 'b' must be an expression",
    )


def test_a_repeated_transition_is_refused() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              on-success: [b, b]
            b:
              action: std.noop
        """
    one_error(parse_workflows, text, "5:23", "wf.tasks.a.on-success[1]", "has non-unique elements")


def test_a_direct_workflow_needs_a_start_task() -> None:
    text = """\
        version: '2.0'
        loop:
          tasks:
            task1:
              on-complete: task2
            task2:
              on-complete: task1
        """
    one_error(
        parse_workflows,
        text,
        "3:3",
        "loop.tasks",
        "Failed to find start tasks in direct workflow. There must be at least one task "
        "without inbound transition.[workflow_name=loop]",
    )


def test_a_join_with_too_few_inbound_tasks() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              on-success: [c]
            b:
              on-success: [d]
            c:
              join: 2
            d:
              join: all
              on-error: d
        """
    assert errors(parse_workflows, text) == [
        "9:7 wf.tasks.c.join: Not enough inbound tasks for task with 'join' "
        "[task_name=c, join=2, inbound_tasks=1]",
    ]


def test_a_join_all_with_no_inbound_task() -> None:
    text = "version: '2.0'\nwf:\n  tasks:\n    a:\n      join: all\n"
    one_error(
        parse_workflows,
        text,
        "5:7",
        "wf.tasks.a.join",
        "No inbound tasks for task with 'join: all' [task_name=a]",
    )


def test_both_action_and_workflow() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              action: std.noop
              workflow: other
        """
    one_error(parse_workflows, text, "6:7", "wf.tasks.a.workflow", "not both")


def test_inline_command_must_start_with_a_name_or_an_expression() -> None:
    text = "version: '2.0'\nwf:\n  tasks:\n    a:\n      action: (x) y=1\n"
    one_error(
        parse_workflows,
        text,
        "5:7",
        "wf.tasks.a.action",
        "Invalid action/workflow task property: (x) y=1",
    )


def test_an_inline_parameter_s_expression_is_checked() -> None:
    text = "version: '2.0'\nwf:\n  tasks:\n    a:\n      action: std.echo output=<% * %>\n"
    one_error(parse_workflows, text, "5:7", "wf.tasks.a.action", "parameter 'output': ")


def test_expression_errors_name_the_value_inside_a_mapping() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              action: std.echo
              input:
                output:
                  nested: [ok, <% $.x + %>]
              publish:
                mixed: <% $.a %> and {{ _.b }}
        """
    found = errors(parse_workflows, text)
    assert [f.split(": ")[0] for f in found] == [
        "8:24 wf.tasks.a.input.output.nested[1]",
        "10:9 wf.tasks.a.publish.mixed",
    ]
    assert "Mixing expression types in a single line is not allowed" in found[1]


def test_with_items_format_errors() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              with-items:
                - x in <% $.xs %>
                - y in z
                - i in [1, 2
                - j in [a, b]
              action: std.noop
        """
    found = errors(parse_workflows, text)
    assert [f.split(": ")[0] for f in found] == [
        "7:11 wf.tasks.a.with-items[1]",
        "8:11 wf.tasks.a.with-items[2]",
        "9:11 wf.tasks.a.with-items[3]",
    ]
    assert "Wrong format of 'with-items' property" in found[0]
    assert "Wrong format of 'with-items' property" in found[1]
    assert "Invalid array in 'with-items' clause: [a, b], error:" in found[2]


def test_retry_errors() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              retry:
                count: -1
                delays: 5
            b:
              retry: count=3
        """
    assert errors(parse_workflows, text) == [
        "7:9 wf.tasks.a.retry.delays: Additional properties are not allowed ('delays' was "
        "unexpected): retry takes count, delay, break-on, continue-on",
        "6:9 wf.tasks.a.retry.count: -1 is not valid under any of the given schemas: "
        "expected an integer from 0 or an expression (<% ... %> or {{ ... }})",
        "5:7 wf.tasks.a.retry: 'delay' is a required property of retry",
        "9:7 wf.tasks.b.retry: 'count' is a required property of retry (one line without "
        "a space has no parameters)",
        "9:7 wf.tasks.b.retry: 'delay' is a required property of retry (one line without "
        "a space has no parameters)",
    ]


def test_policy_types() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              wait-before: 1.5
              timeout: '30'
              pause-before: 'False'
              concurrency: <% $.n %>
        """
    found = errors(parse_workflows, text)
    assert [f.split(": ")[0] for f in found] == [
        "5:7 wf.tasks.a.wait-before",
        "6:7 wf.tasks.a.timeout",
        "7:7 wf.tasks.a.pause-before",
    ]
    assert all("is not valid under any of the given schemas" in f for f in found)


def test_publish_in_a_clause_needs_a_section() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              on-success:
                publish:
                  brunch: {x: 1}
                next: b
            b:
              action: std.noop
        """
    assert errors(parse_workflows, text) == [
        "7:11 wf.tasks.a.on-success.publish.brunch: Additional properties are not allowed "
        "('brunch' was unexpected): publish takes branch, global, atomic; did you mean branch?",
        "6:9 wf.tasks.a.on-success.publish: Either 'branch', 'global' or 'atomic' must be "
        "specified",
    ]


def test_reverse_requires_unknown_task() -> None:
    text = """\
        version: '2.0'
        wf:
          type: reverse
          tasks:
            a:
              requires: [b, c]
            b:
              action: std.noop
        """
    one_error(parse_workflows, text, "6:7", "wf.tasks.a.requires", "Task 'c' not found.")


def test_reverse_requires_cycle_names_the_loop() -> None:
    text = """\
        version: '2.0'
        wf:
          type: reverse
          tasks:
            a:
              requires: c
            b:
              requires: a
            c:
              requires: [b]
            d:
              requires: [a]
        """
    one_error(
        parse_workflows,
        text,
        "6:7",
        "wf.tasks.a.requires",
        "the tasks a -> c -> b -> a require each other in a cycle",
    )


def test_a_task_body_must_be_a_non_empty_mapping() -> None:
    text = "version: '2.0'\nwf:\n  tasks:\n    a: {}\n    b: std.noop\n"
    assert errors(parse_workflows, text) == [
        "4:5 wf.tasks.a: {} does not have enough properties: expected a non-empty mapping",
        "5:5 wf.tasks.b: 'std.noop' is not of type 'object': expected a non-empty mapping",
    ]


def test_a_transition_to_a_task_with_errors_is_not_also_unknown() -> None:
    text = "version: '2.0'\nwf:\n  tasks:\n    a:\n      on-success: b\n    b: {}\n"
    assert errors(parse_workflows, text) == [
        "6:5 wf.tasks.b: {} does not have enough properties: expected a non-empty mapping",
    ]


def test_an_advanced_clause_refuses_other_keys() -> None:
    text = """\
        version: '2.0'
        wf:
          tasks:
            a:
              on-success:
                next: b
                then: c
            b: {action: std.noop}
        """
    one_error(parse_workflows, text, "7:9", "wf.tasks.a.on-success.then", "('then' was unexpected)")


def test_json_documents_are_located_too() -> None:
    text = '{"version": "2.0",\n "wf": {"tasks": {"a": {"on-success": "nowhere"}}}}'
    found = errors(parse_workflows, text)
    assert found[0].startswith("2:25 wf.tasks.a.on-success: Task 'nowhere' not found.")


def test_two_yaml_documents_are_refused() -> None:
    found = errors(parse_workflows, "version: '2.0'\n---\nother: 1\n")
    assert found == [
        "2:1 : Definition could not be parsed: expected a single document, found another"
    ]


def test_a_workflow_without_tasks() -> None:
    assert errors(parse_workflows, "version: '2.0'\nwf:\n  type: direct\n") == [
        "2:1 wf: 'tasks' is a required property"
    ]


def test_the_task_count_is_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflows, "MAX_TASKS_PER_WORKFLOW", 3)
    tasks = "".join(f"    t{i}:\n      action: std.noop\n" for i in range(4))
    found = errors(parse_workflows, "version: '2.0'\nwf:\n  tasks:\n" + tasks)
    assert found == [
        "3:3 wf.tasks: the workflow has 4 tasks, more than the limit of 3 (MAX_TASKS_PER_WORKFLOW)"
    ]


def test_task_name_length_limits() -> None:
    long_name, join_name = "t" * 256, "j" * 209
    text = (
        "version: '2.0'\nwf:\n  tasks:\n"
        f"    {long_name}:\n      on-success: {join_name}\n"
        f"    {join_name}:\n      join: 1\n"
    )
    found = errors(parse_workflows, text)
    assert found == [
        f"4:5 wf.tasks.{long_name}: The length of a '{long_name}' task name must not exceed "
        "255 symbols",
        f"6:5 wf.tasks.{join_name}: The length of a '{join_name}' join task name must not "
        "exceed 208 symbols",
    ]
