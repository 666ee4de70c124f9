"""The workflow engine, end to end: Mistral workflows run on the kernel
over real stores, with the real actions; each test states the Mistral
behaviour it holds."""

from __future__ import annotations

import time

import pytest

from convection.common import Conflict, InvalidInput
from convection.workflows import (
    complete_action_execution,
    list_action_executions,
    rerun_task,
    skip_task,
    update_execution,
)

from .conftest import PROJECT, Runner

HELLO = """
version: '2.0'
hello:
  description: Greets, then shouts.
  input:
    - name: world
  vars:
    mark: "!"
  tasks:
    greet:
      action: std.echo output="Hello, <% $.name %>"
      publish:
        greeting: <% task().result %>
      on-success: [shout]
    shout:
      action: std.echo
      input:
        output: <% $.greeting + $.mark %>
      publish:
        loud: <% task().result %>
  output:
    loud: <% $.loud %>
"""


def test_publish_feeds_the_next_task_and_output(runner: Runner) -> None:
    done = runner.run(HELLO, "hello", input={"name": "Ann"})
    assert done["state"] == "SUCCESS", done["state_info"]
    assert done["output"] == {"loud": "Hello, Ann!"}
    tasks = runner.tasks(done["id"])
    assert tasks["greet"]["published"] == {"greeting": "Hello, Ann"}
    assert tasks["shout"]["result"] == "Hello, Ann!"
    assert {t["state"] for t in tasks.values()} == {"SUCCESS"}
    assert all(t["processed"] for t in tasks.values())


def test_input_defaults_and_a_wrong_input_is_refused(runner: Runner) -> None:
    runner.upload(HELLO)
    done = runner.wait(runner.start("hello"))
    assert done["input"] == {"name": "world"}
    with pytest.raises(InvalidInput, match=r"unexpected=\['nme'\]"):
        runner.start("hello", input={"nme": "x"})


FAN = """
version: '2.0'
fan:
  input:
    - hosts: [a, b, c, d, e]
  tasks:
    each:
      with-items: h in <% $.hosts %>
      concurrency: 2
      action: std.echo output=<% $.h %>
      publish:
        got: <% task().result %>
      on-success: [left, right]
    left:
      action: std.echo output="L"
      publish: {l: <% task().result %>}
      on-success: [joined]
    right:
      action: std.echo output="R"
      publish: {r: <% task().result %>}
      on-success: [joined]
    joined:
      join: all
      action: std.echo output="<% $.l + $.r %>"
      publish:
        both: <% task().result %>
"""


def test_with_items_keeps_order_and_a_join_merges_its_branches(runner: Runner) -> None:
    done = runner.run(FAN, "fan")
    assert done["state"] == "SUCCESS", done["state_info"]
    tasks = runner.tasks(done["id"])
    assert tasks["each"]["result"] == ["a", "b", "c", "d", "e"]
    assert tasks["joined"]["result"] == "LR"
    # No output section: the final context is the output.
    assert done["output"]["both"] == "LR" and done["output"]["got"] == list("abcde")
    actions = list_action_executions(runner.store, PROJECT, task_execution_id=tasks["each"]["id"])
    assert len(actions) == 5 and all(a["accepted"] for a in actions)


ERRORS = """
version: '2.0'
late:
  tasks:
    bad:
      action: std.fail
    slow:
      action: std.sleep seconds=1
      publish:
        slow_done: true
handled:
  tasks:
    bad:
      action: std.fail
      on-error:
        - recover
    recover:
      action: std.echo output="recovered"
noop_handles:
  tasks:
    bad:
      action: std.fail
      on-error: noop
complete_does_not_handle:
  tasks:
    bad:
      action: std.fail
      on-complete: [after]
    after:
      action: std.noop
"""


def test_a_workflow_fails_late_with_mistrals_message(sqlite_runner: Runner) -> None:
    done = sqlite_runner.run(ERRORS, "late")
    assert done["state"] == "ERROR"
    tasks = sqlite_runner.tasks(done["id"])
    assert tasks["slow"]["state"] == "SUCCESS"  # the parallel branch finished first
    bad = tasks["bad"]
    (run,) = list_action_executions(sqlite_runner.store, PROJECT, task_execution_id=bad["id"])
    assert done["state_info"] == (
        "Failure caused by error in tasks: bad\n\n"
        f"  bad [task_ex_id={bad['id']}] -> {bad['state_info']}\n"
        f"    [action_ex_id={run['id']}, idx=0]: {run['output']['result']}\n"
    )
    assert done["output"] == {"result": done["state_info"]}


@pytest.mark.parametrize(
    ("workflow", "state"),
    [("handled", "SUCCESS"), ("noop_handles", "SUCCESS"), ("complete_does_not_handle", "ERROR")],
)
def test_what_handles_an_error(sqlite_runner: Runner, workflow: str, state: str) -> None:
    sqlite_runner.upload(ERRORS) if workflow == "handled" else None
    if workflow != "handled":
        sqlite_runner.upload(ERRORS)
    done = sqlite_runner.wait(sqlite_runner.start(workflow))
    assert done["state"] == state
    assert sqlite_runner.tasks(done["id"])["bad"]["state"] == "ERROR"


COMMANDS = """
version: '2.0'
stop:
  tasks:
    one:
      action: std.noop
      on-success:
        - fail msg="stopped at <% task().name %>"
        - never
    never:
      action: std.noop
finish_early:
  tasks:
    one:
      action: std.noop
      on-success:
        - succeed
  output:
    done: finished
"""


def test_engine_commands_end_the_workflow_at_once(sqlite_runner: Runner) -> None:
    sqlite_runner.upload(COMMANDS)
    stopped = sqlite_runner.wait(sqlite_runner.start("stop"))
    assert (stopped["state"], stopped["state_info"]) == ("ERROR", "stopped at one")
    assert "never" not in sqlite_runner.tasks(stopped["id"])
    early = sqlite_runner.wait(sqlite_runner.start("finish_early"))
    assert early["state"] == "SUCCESS" and early["output"] == {"done": "finished"}


RETRY = """
version: '2.0'
retrying:
  tasks:
    flaky:
      action: std.fail
      retry:
        count: 2
        delay: 0
      on-error: [report]
    report:
      action: std.echo output=<% task(flaky).state %>
"""


def test_retry_runs_count_more_times_then_the_error_is_handled(sqlite_runner: Runner) -> None:
    done = sqlite_runner.run(RETRY, "retrying")
    assert done["state"] == "SUCCESS", done["state_info"]
    tasks = sqlite_runner.tasks(done["id"])
    flaky = tasks["flaky"]
    assert flaky["runtime_context"]["retry_task_policy"] == {"retry_no": 2}
    runs = list_action_executions(sqlite_runner.store, PROJECT, task_execution_id=flaky["id"])
    assert len(runs) == 3  # the first run and two retries
    assert sum(r["accepted"] for r in runs) == 1  # only the last one counts
    assert tasks["report"]["result"] == "ERROR"


SUB = """
version: '2.0'
parent:
  tasks:
    call:
      workflow: child
      input:
        name: Bob
        extra: passed-as-param
      publish:
        said: <% task().result.greeting %>
child:
  input:
    - name
  tasks:
    greet:
      action: std.echo output="Hello, <% $.name %>"
      publish:
        greeting: <% task().result %>
  output:
    greeting: <% $.greeting %>
"""


def test_a_sub_workflow_result_is_its_output(runner: Runner) -> None:
    done = runner.run(SUB, "parent")
    assert done["state"] == "SUCCESS", done["state_info"]
    call = runner.tasks(done["id"])["call"]
    assert call["type"] == "WORKFLOW" and call["published"] == {"said": "Hello, Bob"}
    children = runner.store.workflows.list_executions(
        PROJECT, filters={"task_execution_id": call["id"]}
    )
    assert len(children) == 1
    child = children[0]
    assert child.input == {"name": "Bob"} and child.params["extra"] == "passed-as-param"
    assert child.root_execution_id == done["id"] and child.state == "SUCCESS"


REVERSE = """
version: '2.0'
deploy:
  type: reverse
  tasks:
    network:
      action: std.echo output="net"
      publish: {net: <% task().result %>}
    vm:
      action: std.echo output="vm on <% $.net %>"
      requires: [network]
      publish: {vm: <% task().result %>}
    unrelated:
      action: std.fail
    service_deployed:
      action: std.echo output="<% $.vm %> serving"
      requires: [vm, network]
"""


def test_a_reverse_workflow_runs_what_its_target_requires(runner: Runner) -> None:
    done = runner.run(REVERSE, "deploy", params={"task_name": "service_deployed"})
    assert done["state"] == "SUCCESS", done["state_info"]
    tasks = runner.tasks(done["id"])
    assert set(tasks) == {"network", "vm", "service_deployed"}
    assert tasks["service_deployed"]["result"] == "vm on net serving"


APPROVAL = """
version: '2.0'
approval:
  tasks:
    prepare:
      action: std.echo output="ready"
      on-success: [approve]
    approve:
      pause-before: true
      action: std.echo output="approved"
      on-success: [deploy]
    deploy:
      action: std.async_noop
"""


def test_pause_before_pauses_and_resume_goes_on(sqlite_runner: Runner) -> None:
    r = sqlite_runner
    r.upload(APPROVAL)
    eid = r.start("approval")
    paused = r.wait(eid)
    assert paused["state"] == "PAUSED"
    approve = r.tasks(eid)["approve"]
    assert (approve["state"], approve["state_info"]) == ("IDLE", "Set by 'pause-before' policy")
    update_execution(r.store, PROJECT, eid, state="RUNNING")
    r.stacks.run_engine(until=lambda: "deploy" in r.tasks(eid), timeout=20)
    deploy = r.tasks(eid)["deploy"]
    assert deploy["state"] == "RUNNING"  # an asynchronous action holds no worker
    (pending,) = list_action_executions(r.store, PROJECT, task_execution_id=deploy["id"])
    assert pending["state"] == "RUNNING"
    complete_action_execution(r.store, PROJECT, pending["id"], state="SUCCESS", output="ok")
    done = r.wait(eid)
    assert done["state"] == "SUCCESS", done["state_info"]
    assert r.tasks(eid)["deploy"]["result"] == "ok"


def test_an_execution_state_changes_as_mistrals_table_allows(sqlite_runner: Runner) -> None:
    r = sqlite_runner
    r.upload(APPROVAL)
    eid = r.start("approval")
    r.wait(eid)
    cancelled = update_execution(r.store, PROJECT, eid, state="CANCELLED", state_info="no")
    assert (cancelled["state"], cancelled["state_info"]) == ("CANCELLED", "no")
    with pytest.raises(Conflict, match="Can't change workflow execution state from CANCELLED"):
        update_execution(r.store, PROJECT, eid, state="PAUSED")
    r.stacks.run_engine(timeout=10)  # nothing is left to run
    assert r.show(eid)["state"] == "CANCELLED"


SLEEPS = """
version: '2.0'
sleepy:
  tasks:
    nap:
      with-items: i in <% range(0, 40) %>
      concurrency: 10
      action: std.sleep seconds=<% 0.05 %>
"""


def test_sleeps_wait_on_timers_within_the_concurrency(sqlite_runner: Runner) -> None:
    start = time.monotonic()
    done = sqlite_runner.run(SLEEPS, "sleepy")
    took = time.monotonic() - start
    assert done["state"] == "SUCCESS", done["state_info"]
    assert len(sqlite_runner.tasks(done["id"])["nap"]["result"]) == 40
    assert took >= 4 * 0.05  # four rounds of ten: the bound held


POLICIES = """
version: '2.0'
waits:
  tasks:
    t:
      wait-before: 1
      wait-after: 1
      action: std.echo output="x"
      fail-on: <% task().result = "x" %>
timing_out:
  tasks:
    t:
      timeout: 1
      action: std.async_noop
"""


def test_wait_policies_and_fail_on(sqlite_runner: Runner) -> None:
    sqlite_runner.upload(POLICIES)
    eid = sqlite_runner.start("waits")
    sqlite_runner.stacks.run_engine(
        until=lambda: sqlite_runner.tasks(eid).get("t", {}).get("state") == "DELAYED", timeout=10
    )
    info = sqlite_runner.tasks(eid)["t"]["state_info"]
    assert info == "Delayed by 'wait-before' policy [delay=1]"
    done = sqlite_runner.wait(eid)
    assert done["state"] == "ERROR"
    assert sqlite_runner.tasks(eid)["t"]["state_info"] == "Failed by 'fail-on' policy"


def test_timeout_fails_a_task_that_waits_too_long(sqlite_runner: Runner) -> None:
    sqlite_runner.upload(POLICIES)
    done = sqlite_runner.wait(sqlite_runner.start("timing_out"))
    assert done["state"] == "ERROR"
    t = sqlite_runner.tasks(done["id"])["t"]
    assert t["state_info"] == "Task timed out [timeout(s)=1]."


JOINS = """
version: '2.0'
broken_join:
  tasks:
    a:
      action: std.fail
      on-success: [j]
    b:
      action: std.noop
      on-success: [j]
    j:
      join: all
      action: std.noop
"""


def test_a_join_that_cannot_be_satisfied_fails(sqlite_runner: Runner) -> None:
    done = sqlite_runner.run(JOINS, "broken_join")
    assert done["state"] == "ERROR"
    j = sqlite_runner.tasks(done["id"])["j"]
    assert (j["state"], j["state_info"]) == ("ERROR", "Failed by tasks: ['a']")


GLOBALS = """
version: '2.0'
globals:
  tasks:
    one:
      action: std.echo output=1
      on-success:
        publish:
          global:
            counter: <% task().result %>
        next: [two]
    two:
      action: std.echo output=<% global(counter) + 1 %>
      publish:
        seen: <% task().result %>
"""


def test_global_publish_reaches_the_workflow_context(sqlite_runner: Runner) -> None:
    done = sqlite_runner.run(GLOBALS, "globals")
    assert done["state"] == "SUCCESS", done["state_info"]
    assert sqlite_runner.tasks(done["id"])["two"]["published"] == {"seen": 2}


RERUN = """
version: '2.0'
rerunnable:
  input:
    - ok: false
  tasks:
    check:
      action: std.echo output=<% env().get(ok, false) %>
      fail-on: <% not task().result %>
      on-success: [after]
      on-skip: [skipped]
    after:
      action: std.echo output="after"
    skipped:
      action: std.echo output="skipped"
"""


def test_rerun_and_skip_a_failed_task(sqlite_runner: Runner) -> None:
    r = sqlite_runner
    r.upload(RERUN)
    eid = r.start("rerunnable")
    assert r.wait(eid)["state"] == "ERROR"
    check = r.tasks(eid)["check"]
    rerun_task(r.store, PROJECT, check["id"], env={"ok": True})
    done = r.wait(eid)
    assert done["state"] == "SUCCESS", done["state_info"]
    assert r.tasks(eid)["after"]["result"] == "after"
    with pytest.raises(Conflict, match=r"The current task execution must be in ERROR for rerun\."):
        rerun_task(r.store, PROJECT, r.tasks(eid)["check"]["id"])

    eid = r.start("rerunnable")
    assert r.wait(eid)["state"] == "ERROR"
    skipped = skip_task(r.store, PROJECT, r.tasks(eid)["check"]["id"])
    assert (skipped["state"], skipped["state_info"]) == ("SKIPPED", "Task was skipped.")
    done = r.wait(eid)
    assert done["state"] == "SUCCESS", done["state_info"]
    assert set(r.tasks(eid)) == {"check", "skipped"}


FORCE = """
version: '2.0'
bad_expression:
  tasks:
    one:
      action: std.echo output=1
      publish:
        x: <% $.missing.deeper %>
      on-error: [never]
    never:
      action: std.noop
unknown_action:
  tasks:
    one:
      action: std.nope
"""


def test_structural_errors_force_fail_without_on_error(sqlite_runner: Runner) -> None:
    sqlite_runner.upload(FORCE)
    done = sqlite_runner.wait(sqlite_runner.start("bad_expression"))
    assert done["state"] == "ERROR"
    tasks = sqlite_runner.tasks(done["id"])
    assert "never" not in tasks
    assert "Can not evaluate YAQL expression" in tasks["one"]["state_info"]
    unknown = sqlite_runner.wait(sqlite_runner.start("unknown_action"))
    assert unknown["state"] == "ERROR"
    assert "std.nope" in sqlite_runner.tasks(unknown["id"])["one"]["state_info"]


ROLLING = """
version: '2.0'
rolling:
  input:
    - nodes: [n1, n2, n3, n4]
  tasks:
    restart_all:
      with-items: node in <% $.nodes %>
      concurrency: 2
      workflow: restart_one
      input:
        node: <% $.node %>
      publish:
        restarted: <% task().result.select($.done) %>
restart_one:
  input:
    - node
  tasks:
    restart:
      action: std.echo output="<% $.node %> restarted"
      publish:
        done: <% task().result %>
  output:
    done: <% $.done %>
"""


def test_with_items_of_a_sub_workflow_start_children_within_the_concurrency(
    sqlite_runner: Runner,
) -> None:
    done = sqlite_runner.run(ROLLING, "rolling")
    assert done["state"] == "SUCCESS", done["state_info"]
    task = sqlite_runner.tasks(done["id"])["restart_all"]
    assert task["published"] == {"restarted": [f"n{i} restarted" for i in range(1, 5)]}
    children = sqlite_runner.store.workflows.list_executions(
        PROJECT, filters={"task_execution_id": task["id"]}
    )
    assert sorted(c.params["index"] for c in children) == [0, 1, 2, 3]


KEEP = """
version: '2.0'
forgetful:
  tasks:
    big:
      action: std.echo output="large"
      keep-result: false
      publish:
        size: <% len(task().result) %>
      on-success: [later]
    later:
      action: std.echo output=<% task(big).result %>
"""


def test_keep_result_false_empties_the_result_after_publish(sqlite_runner: Runner) -> None:
    done = sqlite_runner.run(KEEP, "forgetful")
    assert done["state"] == "SUCCESS", done["state_info"]
    tasks = sqlite_runner.tasks(done["id"])
    assert tasks["big"]["published"] == {"size": 5}
    assert tasks["later"]["result"] is None
    (run,) = list_action_executions(
        sqlite_runner.store, PROJECT, task_execution_id=tasks["big"]["id"]
    )
    assert run["output"] == {}


PAUSING = """
version: '2.0'
long:
  tasks:
    first:
      action: std.sleep seconds=1
      on-success: [second]
    second:
      action: std.echo output="went on"
"""


def test_a_pause_holds_the_next_tasks_until_resume(sqlite_runner: Runner) -> None:
    r = sqlite_runner
    r.upload(PAUSING)
    eid = r.start("long")
    r.stacks.run_engine(until=lambda: "first" in r.tasks(eid), timeout=10)
    assert update_execution(r.store, PROJECT, eid, state="PAUSED")["state"] == "PAUSED"
    assert r.wait(eid)["state"] == "PAUSED"
    time.sleep(1.2)
    r.stacks.run_engine(until=lambda: r.tasks(eid)["first"]["state"] == "SUCCESS", timeout=10)
    assert "second" not in r.tasks(eid) and r.show(eid)["state"] == "PAUSED"
    update_execution(r.store, PROJECT, eid, state="RUNNING")
    done = r.wait(eid)
    assert done["state"] == "SUCCESS", done["state_info"]
    assert r.tasks(eid)["second"]["result"] == "went on"


ASYNC_ITEMS = """
version: '2.0'
callbacks:
  tasks:
    wait_all:
      with-items: i in [1, 2, 3]
      action: std.async_noop
      on-success: [after]
    after:
      action: std.echo output="after"
"""


def test_several_completions_wake_a_task_once(sqlite_runner: Runner) -> None:
    """Three asynchronous items completed at once write three wakes of one
    node: the first runs it, the others find it finished and do nothing."""
    r = sqlite_runner
    r.upload(ASYNC_ITEMS)
    eid = r.start("callbacks")
    r.stacks.run_engine(until=lambda: "wait_all" in r.tasks(eid), timeout=10)
    task = r.tasks(eid)["wait_all"]
    r.stacks.run_engine(
        until=lambda: len(list_action_executions(r.store, PROJECT, task_execution_id=task["id"]))
        == 3,
        timeout=10,
    )
    for run in list_action_executions(r.store, PROJECT, task_execution_id=task["id"]):
        complete_action_execution(r.store, PROJECT, run["id"], state="SUCCESS", output=run["id"])
    done = r.wait(eid)
    assert done["state"] == "SUCCESS", done["state_info"]
    tasks = r.tasks(eid)
    assert len(tasks["wait_all"]["result"]) == 3
    assert len(r.store.workflows.list_tasks(PROJECT, filters={"execution_id": eid})) == 2


FORCED = """
version: '2.0'
forced:
  vars:
    greeting: hi
  tasks:
    wait:
      action: std.async_noop
  output:
    said: <% $.greeting %>
"""


def test_a_forced_end_writes_the_output_so_far(sqlite_runner: Runner) -> None:
    r = sqlite_runner
    r.upload(FORCED)
    eid = r.start("forced")
    r.stacks.run_engine(until=lambda: "wait" in r.tasks(eid), timeout=10)
    forced = update_execution(r.store, PROJECT, eid, state="SUCCESS")
    assert (forced["state"], forced["output"]) == ("SUCCESS", {"said": "hi"})
    r.stacks.run_engine(timeout=5)  # the engine lets it go
    assert r.show(eid)["state"] == "SUCCESS"
    other = r.start("forced")
    r.stacks.run_engine(until=lambda: "wait" in r.tasks(other), timeout=10)
    ended = update_execution(r.store, PROJECT, other, state="ERROR", state_info="stopped")
    assert (ended["state"], ended["output"]) == ("ERROR", {"result": "stopped"})
    with pytest.raises(Conflict, match="from ERROR to SUCCESS"):
        update_execution(r.store, PROJECT, other, state="SUCCESS")


OUTPUTS = """
version: '2.0'
bad_output:
  tasks:
    t:
      action: std.noop
  output:
    x: <% $.missing.deeper %>
big_input:
  input: [blob]
  tasks:
    t:
      action: std.noop
  output:
    size: <% len($.blob) %>
"""


def test_an_output_that_cannot_be_evaluated_fails_the_workflow(sqlite_runner: Runner) -> None:
    sqlite_runner.upload(OUTPUTS)
    done = sqlite_runner.wait(sqlite_runner.start("bad_output"))
    assert done["state"] == "ERROR"
    assert done["state_info"].startswith(
        f"Failed to check and complete [wf_ex_id={done['id']}, wf_name=bad_output]: "
        "Can not evaluate YAQL expression"
    )
    # A workflow's data may be large: the expression budget allows any value.
    big = sqlite_runner.wait(sqlite_runner.start("big_input", input={"blob": "x" * 200_000}))
    assert (big["state"], big["output"]) == ("SUCCESS", {"size": 200_000})


def test_an_engine_until_idle_stops_beside_a_paused_execution(sqlite_runner: Runner) -> None:
    """A paused execution waits for a resume, not for an engine: ``engine
    --until-idle`` returns, and the next engine goes on after the resume."""
    r = sqlite_runner
    r.upload(APPROVAL)
    eid = r.start("approval")
    r.stacks.run_engine(timeout=20)  # until idle: returns although paused
    assert r.show(eid)["state"] == "PAUSED"
    update_execution(r.store, PROJECT, eid, state="RUNNING")
    r.stacks.run_engine(until=lambda: "deploy" in r.tasks(eid), timeout=20)
    assert r.tasks(eid)["approve"]["state"] == "SUCCESS"
