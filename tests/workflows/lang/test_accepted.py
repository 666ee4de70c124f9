"""Documents Mistral accepts stay accepted, and parse into the specs the
engine needs: defaults applied, task-defaults merged as Mistral merges
them, inline parameters read as Mistral reads them."""

from __future__ import annotations

import textwrap

from convection.workflows import (
    REQUIRED,
    Policies,
    Publish,
    Retry,
    WithItems,
    WorkflowSpec,
    parse_workflows,
)

from ._helpers import fixture, located


def rolling_deploy() -> WorkflowSpec:
    specs, diags = parse_workflows(fixture("rolling_deploy.yaml"), "rolling.yaml")
    assert not diags.has_errors, located(diags)
    assert len(specs) == 1
    return specs[0]


def test_workflow_keys() -> None:
    wf = rolling_deploy()
    assert (wf.name, wf.type, wf.tags) == ("rolling_deploy", "direct", ("deploy", "web"))
    assert wf.description == "Deploy an application to every web node, one batch at a time."
    assert wf.input == {
        "nodes": REQUIRED,
        "version": REQUIRED,
        "batch_size": 2,
        "notify": "ops@example.com",
    }
    assert wf.vars == {"started": "<% now() %>"}
    assert wf.output == {"installed": "<% $.installed %>", "version": "<% $.version %>"}
    assert wf.output_on_error == {"reason": "deployment failed"}
    assert list(wf.tasks) == [
        "check_input",
        "fetch_package",
        "drain_nodes",
        "install",
        "health_check",
        "undrain",
        "notify",
        "report_failure",
    ]


def test_policies_come_from_the_task_else_from_task_defaults() -> None:
    tasks = rolling_deploy().tasks
    assert tasks["check_input"].policies == Policies(retry=Retry(2, 10), timeout=600)
    assert tasks["fetch_package"].policies == Policies(
        retry=Retry(5, 3, break_on="<% task().result.status_code = 404 %>"), timeout=600
    )
    assert tasks["drain_nodes"].policies.concurrency == "<% $.batch_size %>"
    assert tasks["install"].policies == Policies(
        retry=Retry(2, 10), timeout=600, wait_after=5, concurrency=2
    )
    assert tasks["health_check"].policies.timeout == 30
    assert tasks["health_check"].policies.fail_on == "<% task().result.status_code != 200 %>"


def test_task_defaults_transitions_are_inherited_without_the_task_itself() -> None:
    tasks = rolling_deploy().tasks
    inherited = tasks["check_input"].clause("error")
    assert inherited is not None and inherited.inherited
    assert [t.target for t in inherited.next] == ["report_failure"]
    assert [t.target for t in tasks["drain_nodes"].next("error")] == ["undrain"]
    assert [t.target for t in tasks["health_check"].next("error")] == ["pause"]
    assert tasks["report_failure"].clause("error") is None


def test_inline_parameters_and_guards() -> None:
    tasks = rolling_deploy().tasks
    assert tasks["fetch_package"].action == "std.http"
    assert tasks["fetch_package"].input == {
        "url": "https://repo.example.com/app/<% $.version %>.tar.gz",
        "method": "GET",
    }
    found = tasks["check_input"].next("success")
    success = [(t.target, t.condition, dict(t.params)) for t in found]
    assert success == [
        ("fetch_package", "<% len($.nodes) > 0 %>", {}),
        ("fail", "<% len($.nodes) = 0 %>", {"msg": "No nodes to deploy to"}),
    ]
    final = tasks["report_failure"].next("complete")[0]
    assert (final.target, final.is_command, dict(final.params)) == (
        "fail",
        True,
        {"msg": "<% $.version %> failed"},
    )


def test_an_unread_inline_value_is_a_warning_not_an_error() -> None:
    _, diags = parse_workflows(fixture("rolling_deploy.yaml"), "rolling.yaml")
    assert located(diags, warnings=True) == [
        "41:7 rolling_deploy.tasks.drain_nodes.action: the value of 'username' is not read "
        "(Mistral reads quoted strings, expressions, [lists], true, false, null and digits, "
        "and drops anything else): quote it"
    ]
    drain = rolling_deploy().tasks["drain_nodes"]
    assert drain.input == {"host": "<% $.node %>", "cmd": "sudo systemctl stop app"}


def test_with_items_zipped_and_sub_workflow_tasks() -> None:
    tasks = rolling_deploy().tasks
    install = tasks["install"]
    assert install.with_items == (
        WithItems("node", "<% $.nodes %>"),
        WithItems("port", [8080, 8081, 8082]),
    )
    assert (install.action, install.workflow, install.type) == (None, "install_on_node", "WORKFLOW")
    assert install.safe_rerun is True
    assert tasks["drain_nodes"].keep_result is False
    assert tasks["drain_nodes"].type == "ACTION"


def test_publish_forms_and_their_merge() -> None:
    tasks = rolling_deploy().tasks
    health = tasks["health_check"]
    assert health.publish_for("SUCCESS") == Publish(
        branch={"healthy": True}, global_={"last_deploy": "<% $.version %>"}
    )
    assert health.publish_for("ERROR") is None
    install = tasks["install"]
    assert install.publish_for("SUCCESS") == Publish(branch={"installed": "<% task().result %>"})


def test_join_and_input_mapping() -> None:
    tasks = rolling_deploy().tasks
    assert tasks["undrain"].join == "all"
    assert tasks["notify"].input["to_addrs"] == ["<% $.notify %>"]
    assert tasks["notify"].input["body"] == "The deployment of <% $.version %> finished.\n"
    assert tasks["check_input"].action == "std.noop"


def parse(text: str) -> tuple[WorkflowSpec, list[str]]:
    specs, diags = parse_workflows(textwrap.dedent(text), "wf.yaml")
    assert not diags.has_errors, located(diags)
    return specs[0], located(diags, warnings=True)


def test_unknown_workflow_keys_are_accepted_with_a_warning() -> None:
    wf, warnings = parse(
        """\
        version: '2.0'
        wf:
          namespace: ignored
          taks: {}
          tasks:
            a:
              action: std.noop
        """
    )
    assert warnings == [
        "3:3 wf.namespace: 'namespace' is not a workflow key and is ignored, as Mistral ignores it",
        "4:3 wf.taks: 'taks' is not a workflow key and is ignored, as Mistral ignores it; "
        "did you mean tasks?",
    ]
    assert list(wf.tasks) == ["a"]


def test_keys_mistral_overwrites_in_a_task_are_ignored() -> None:
    wf, warnings = parse(
        """\
        version: '2.0'
        wf:
          tasks:
            a:
              type: reverse
              name: other
              action: std.noop
        """
    )
    assert wf.tasks["a"].name == "a"
    assert [w.split(": ")[1] for w in warnings] == [
        "'type' is ignored",
        "'name' is ignored",
    ]


def test_a_task_named_like_an_engine_command_is_warned_about() -> None:
    _, warnings = parse(
        """\
        version: '2.0'
        wf:
          tasks:
            start:
              on-success: noop
            noop:
              action: std.noop
        """
    )
    assert warnings == [
        "6:5 wf.tasks.noop: a task named 'noop' is never run by a transition: the engine "
        "command 'noop' wins (name it otherwise)"
    ]


def test_more_forms_mistral_accepts() -> None:
    wf, warnings = parse(
        """\
        version: 2
        wf:
          input:
            - action_name: std.noop
          tasks:
            dynamic:
              action: <% $.action_name %>
              input: <% {x => 1} %>
              join: 0
              retry: count=3 delay=1 continue-on=<% $.again %>
              on-skip: later
              publish-on-skip:
                skipped: true
              on-error:
                publish:
                  atomic:
                    a: 1
            later:
              target: <% $.worker %>
              pause-before: true
              wait-before: <% $.wait %>
        """
    )
    dynamic = wf.tasks["dynamic"]
    assert dynamic.action == "<% $.action_name %>"
    assert dynamic.input == "<% {x => 1} %>"
    assert dynamic.join is None
    assert dynamic.policies.retry == Retry(3, 1, continue_on="<% $.again %>")
    assert [t.target for t in dynamic.next("skip")] == ["later"]
    assert dynamic.publish_for("SKIPPED") == Publish(branch={"skipped": True})
    assert dynamic.publish_for("ERROR") == Publish(atomic={"a": 1})
    later = wf.tasks["later"]
    assert (later.target, later.policies.pause_before, later.policies.wait_before) == (
        "<% $.worker %>",
        True,
        "<% $.wait %>",
    )
    assert warnings == [
        "16:11 wf.tasks.dynamic.on-error.publish.atomic: 'atomic' is accepted but not "
        "applied, as in Mistral"
    ]


def test_task_defaults_policy_fills_what_a_task_leaves_at_its_default() -> None:
    """``pause-before: false`` on the task does not override task-defaults'
    true: Mistral takes the default when the task's policy would not apply."""
    wf, _ = parse(
        """\
        version: '2.0'
        wf:
          task-defaults:
            pause-before: true
            wait-before: 3
            safe-rerun: true
            requires: [never_used_in_direct]
          tasks:
            a:
              pause-before: false
              wait-before: 0
              safe-rerun: false
        """
    )
    a = wf.tasks["a"]
    assert (a.policies.pause_before, a.policies.wait_before, a.safe_rerun) == (True, 3, False)
    assert a.requires == ()


def test_reverse_workflow_requires_with_task_defaults() -> None:
    specs, diags = parse_workflows(fixture("murano_environment.yaml"), "env.yaml")
    assert not diags.has_errors, located(diags)
    wf = specs[0]
    assert wf.type == "reverse"
    requires = {name: task.requires for name, task in wf.tasks.items()}
    assert requires == {
        "network_ready": (),
        "vm1_booted": ("network_ready",),
        "vm2_booted": ("network_ready",),
        "vm1_configured": ("vm1_booted", "network_ready"),
        "vm2_configured": ("vm2_booted", "network_ready"),
        "service_deployed": ("vm1_configured", "vm2_configured", "network_ready"),
    }
    assert wf.tasks["vm2_booted"].policies.retry == Retry(3, 2)
    assert all(not task.clauses for task in wf.tasks.values())
