"""Workflow rows on every store (memory, SQLite, PostgreSQL): definitions,
executions, tasks and action executions, and traversals of two kinds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from convection.common.errors import NotFound
from convection.store import (
    ActionDefinitionRecord,
    ActionExecutionRecord,
    AddActionExecution,
    AddNodes,
    AddTaskExecution,
    AddTimer,
    DefinitionExists,
    ExecutionRecord,
    NodeRecord,
    ReleaseSuccessors,
    StackRecord,
    StaleTraversal,
    Store,
    TaskExecutionRecord,
    TraversalRecord,
    UpdateActionExecution,
    UpdateExecution,
    UpdateNode,
    UpdateTaskExecution,
    WorkbookRecord,
    WorkflowDefinitionRecord,
)

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def _workflow(
    name: str, project: str = "p", namespace: str = "", **kw: object
) -> WorkflowDefinitionRecord:
    return WorkflowDefinitionRecord(
        id=f"{project}-{namespace}-{name}", project=project, name=name, namespace=namespace,
        definition=f"{name}:\n  tasks: {{}}\n", input='a, b="1"', **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _execution(eid: str, project: str = "p", **kw: object) -> ExecutionRecord:
    return ExecutionRecord(
        id=eid, project=project, workflow_id="w1", workflow_name="wf",
        input={"big": "x" * 100}, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _node(tid: str, key: str, pending: int = 0, successors: tuple[str, ...] = ()) -> NodeRecord:
    return NodeRecord(
        traversal_id=tid, key=key, kind="task", resource_name=key, pending=pending,
        state="waiting" if pending else "ready", successors=successors,
    )  # fmt: skip


def _run(store: Store, eid: str, tid: str, nodes: list[NodeRecord] | None = None) -> None:
    """An execution with its workflow traversal, in one call."""
    traversal = TraversalRecord(id=tid, kind="workflow", execution_id=eid, action="RUN")
    store.workflows.create_execution(
        _execution(eid, state="RUNNING"),
        traversal=traversal,
        nodes=nodes if nodes is not None else [_node(tid, "a"), _node(tid, "b", 1)],
    )


def _task(tid: str, eid: str, name: str, **kw: object) -> TaskExecutionRecord:
    return TaskExecutionRecord(
        id=tid,
        execution_id=eid,
        project="p",
        name=name,
        node_key=name,
        **kw,  # type: ignore[arg-type]
    )


# -- definitions -----------------------------------------------------------------------
def test_definitions_are_unique_per_name_namespace_and_project(store: Store) -> None:
    wfs = store.workflows
    wfs.create_workflow(_workflow("deploy", interface={"input": ["a", {"b": "1"}], "output": []}))
    wfs.create_workflow(_workflow("deploy", namespace="ns"))
    wfs.create_workflow(_workflow("deploy", project="q"))
    with pytest.raises(DefinitionExists) as raised:
        wfs.create_workflow(WorkflowDefinitionRecord(id="other", project="p", name="deploy"))
    assert str(raised.value) == (
        "Duplicate entry for WorkflowDefinition ['name', 'namespace', 'project_id']: deploy, , p"
    )
    found = wfs.get_workflow("p", "deploy")
    assert found is not None and found.id == "p--deploy" and found.input == 'a, b="1"'
    assert found.interface == {"input": ["a", {"b": "1"}], "output": []}
    assert found.created_at is not None
    assert wfs.get_workflow("p", "deploy", "ns") is not None
    assert wfs.get_workflow("p", "p--deploy") == found  # by id
    assert wfs.get_workflow("q", "p--deploy") is None  # another project's, private
    assert wfs.get_workflow("p", "nope") is None


def test_a_public_definition_is_found_from_other_projects(store: Store) -> None:
    store.workflows.create_workflow(_workflow("shared", project="q", scope="public"))
    found = store.workflows.get_workflow("p", "shared")
    assert found is not None and found.project == "q"


def test_definitions_update_rename_clash_and_delete(store: Store) -> None:
    wfs = store.workflows
    wfs.create_workflow(_workflow("a"))
    wfs.create_workflow(_workflow("b"))
    changed = wfs.update_workflow("p--a", {"definition": "new", "tags": ["x"]})
    assert changed is not None and changed.definition == "new" and changed.tags == ["x"]
    assert changed.updated_at is not None
    with pytest.raises(DefinitionExists):
        wfs.update_workflow("p--a", {"name": "b"})
    with pytest.raises(ValueError, match="read-only"):
        wfs.update_workflow("p--a", {"project": "q"})
    with pytest.raises(ValueError, match="scope"):
        wfs.update_workflow("p--a", {"scope": "everyone"})
    assert wfs.update_workflow("missing", {"definition": ""}) is None
    assert wfs.delete_workflow("p--a") and not wfs.delete_workflow("p--a")
    assert [w.name for w in wfs.list_workflows("p")] == ["b"]


def test_workbooks_and_adhoc_actions(store: Store) -> None:
    wfs = store.workflows
    wfs.create_workbook(WorkbookRecord(id="wb", project="p", name="book", definition="d"))
    with pytest.raises(DefinitionExists, match="Workbook"):
        wfs.create_workbook(WorkbookRecord(id="wb2", project="p", name="book"))
    for name in ("z.ssh", "a.echo"):
        action = ActionDefinitionRecord(id=name, project="p", name=name, input="host")
        wfs.create_adhoc_action(action)
    assert [a.name for a in wfs.list_adhoc_actions("p")] == ["a.echo", "z.ssh"]  # by name
    book = wfs.get_workbook("p", "book")
    assert book is not None and book.definition == "d"
    updated = wfs.update_adhoc_action("z.ssh", {"description": "runs"})
    assert updated is not None and updated.description == "runs"
    assert wfs.delete_workbook("wb") and wfs.get_workbook("p", "wb") is None


def test_listings_page_sort_filter_and_scope_to_a_project(store: Store) -> None:
    wfs = store.workflows
    for i, name in enumerate(["c", "a", "d", "b", "e"]):
        wfs.create_workflow(
            _workflow(
                name, created_at=T0 + timedelta(seconds=i), scope="public" if i % 2 else "private"
            )
        )
    wfs.create_workflow(_workflow("zz", project="other"))
    assert [w.name for w in wfs.list_workflows("p")] == ["c", "a", "d", "b", "e"]
    assert len(wfs.list_workflows(None)) == 6
    by_name = wfs.list_workflows("p", sort_keys=["name"], sort_dir="desc")
    assert [w.name for w in by_name] == ["e", "d", "c", "b", "a"]
    first = wfs.list_workflows("p", sort_keys=["name"], limit=2)
    rest = wfs.list_workflows("p", sort_keys=["name"], limit=10, marker=first[-1].id)
    assert [w.name for w in first + rest] == ["a", "b", "c", "d", "e"]
    public = wfs.list_workflows("p", filters={"scope": "public"}, sort_keys=["name"])
    assert [w.name for w in public] == ["a", "b"]
    assert [w.name for w in wfs.list_workflows("p", filters={"name": ["a", "e"]})] == ["a", "e"]
    with pytest.raises(ValueError, match="sort"):
        wfs.list_workflows("p", sort_keys=["definition"])
    with pytest.raises(ValueError, match="filter"):
        wfs.list_workflows("p", filters={"definition": "x"})
    with pytest.raises(NotFound):
        wfs.list_workflows("p", marker="nope")


# -- executions and the journal ------------------------------------------------------------
def test_an_execution_owns_its_workflow_traversal(store: Store) -> None:
    _run(store, "e1", "t1")
    execution = store.workflows.get_execution("e1")
    assert execution is not None and execution.traversal_id == "t1"
    assert execution.input == {"big": "x" * 100} and execution.state == "RUNNING"
    traversal = store.get_traversal("t1")
    assert traversal is not None
    assert (traversal.kind, traversal.execution_id, traversal.stack_id) == ("workflow", "e1", "")
    assert [t.id for t in store.active_traversals()] == ["t1"]
    assert store.scan_active("me") == ([], [traversal])
    assert store.scan_active("me", kinds={"stack"}) == ([], [])
    assert store.scan_active("me", kinds={"workflow"})[1] == [traversal]
    claimed = store.claim_ready("t1", "me", 5, T0 + timedelta(days=3650))
    assert [n.key for n in claimed] == ["a"]


def test_both_kinds_scan_claim_and_commit_together(store: Store) -> None:
    stack = StackRecord(id="s1", project="p", name="web", action="CREATE", status="IN_PROGRESS")
    store.create_stack(stack)
    store.start_traversal(
        TraversalRecord(id="st", stack_id="s1", action="CREATE"), [_node("st", "r")], {}
    )
    _run(store, "e1", "wt")
    until = datetime.now(UTC) + timedelta(minutes=1)
    assert store.take_traversal("wt", "me", until, datetime.now(UTC))
    mine, others = store.scan_active("me")
    assert mine == ["wt"] and [t.id for t in others] == ["st"]
    assert store.scan_active("me", kinds={"stack"}) == ([], others)
    claimed = store.claim_many([("st", 5), ("wt", 5)], "me", until)
    assert {k: [n.key for n in v] for k, v in claimed.items() if v} == {"st": ["r"], "wt": ["a"]}
    stale = store.apply_many(
        [
            ("st", [UpdateNode("st", "r", {"state": "done"})]),
            ("wt", [UpdateNode("wt", "a", {"state": "done"}), ReleaseSuccessors("wt", ("b",))]),
        ]
    )
    assert stale == [False, False]
    assert store.get_node("wt", "b") is not None and store.get_node("wt", "b").state == "ready"  # type: ignore[union-attr]


def test_a_tasks_outcome_and_its_node_commit_in_one_batch(store: Store) -> None:
    _run(store, "e1", "t1")
    task = _task("k1", "e1", "a", state="RUNNING", started_at=T0)
    action = ActionExecutionRecord(id="x1", project="p", name="std.echo", task_execution_id="k1",
                                   input={"output": 1})  # fmt: skip
    store.apply([AddTaskExecution(task), AddActionExecution(action)], traversal_id="t1")
    store.apply(
        [
            UpdateActionExecution(
                "x1", {"state": "SUCCESS", "accepted": True, "output": {"result": 1}}
            ),
            UpdateTaskExecution("k1", {"state": "SUCCESS", "published": {"v": 1}}),
            UpdateTaskExecution("k1", {"processed": True, "finished_at": T0}),  # merged
            UpdateNode("t1", "a", {"state": "done"}),
            ReleaseSuccessors("t1", ("b",)),
            UpdateExecution("e1", {"context": {"vars": {}, "global": {"g": 2}}}),
        ],
        traversal_id="t1",
    )
    found = store.workflows.get_task("k1")
    assert found is not None
    assert (found.state, found.published, found.processed) == ("SUCCESS", {"v": 1}, True)
    assert found.finished_at == T0 and found.started_at == T0 and found.updated_at is not None
    ran = store.workflows.get_action_execution("x1")
    assert ran is not None and ran.accepted and ran.output == {"result": 1}
    execution = store.workflows.get_execution("e1")
    assert execution is not None and execution.context["global"] == {"g": 2}
    assert execution.input == {"big": "x" * 100}  # untouched
    listed = store.workflows.list_tasks("p", filters={"execution_id": "e1"})
    assert [t.id for t in listed] == ["k1"]
    assert [
        a.id
        for a in store.workflows.list_action_executions("p", filters={"task_execution_id": "k1"})
    ] == ["x1"]


def test_nodes_join_a_running_traversal_with_the_task_that_made_them(store: Store) -> None:
    """A direct workflow's next tasks are nodes added by the batch that ends
    the task before them: they are claimable at once, and an update of a
    new node in the same batch applies after its insert."""
    _run(store, "e1", "t1", [_node("t1", "a")])
    store.apply(
        [
            UpdateNode("t1", "a", {"state": "done"}),
            AddNodes("t1", (_node("t1", "b"), _node("t1", "c"))),
            UpdateNode("t1", "c", {"state": "sleeping"}),
            AddTimer("t1", "c", T0),
        ],
        traversal_id="t1",
    )
    until = datetime.now(UTC) + timedelta(minutes=1)
    assert [n.key for n in store.claim_ready("t1", "me", 5, until)] == ["b"]
    c = store.get_node("t1", "c")
    assert c is not None and c.state == "sleeping"
    assert [t.node_key for t in store.due_timers(T0, 10)] == ["c"]
    with pytest.raises(ValueError):
        store.apply([AddNodes("t1", (_node("other", "d"),))])
    with pytest.raises(ValueError):
        store.apply([AddNodes("t1", (_node("t1", "b"),))])  # a taken key
    with pytest.raises(NotFound):
        store.apply([AddNodes("nope", (_node("nope", "d"),))])
    assert store.get_node("nope", "d") is None


def test_a_failing_change_writes_nothing_of_its_batch(store: Store) -> None:
    _run(store, "e1", "t1")
    with pytest.raises(NotFound):
        store.apply(
            [UpdateNode("t1", "a", {"state": "done"}), AddTaskExecution(_task("k1", "nope", "a"))],
            traversal_id="t1",
        )
    with pytest.raises(NotFound):
        store.apply([UpdateTaskExecution("missing", {"state": "RUNNING"})])
    with pytest.raises(ValueError, match="state"):
        store.apply([UpdateTaskExecution("k1", {"state": "FINISHED"})])
    with pytest.raises(ValueError, match="read-only"):
        store.apply([UpdateTaskExecution("k1", {"execution_id": "e2"})])
    store.apply([AddTaskExecution(_task("k1", "e1", "a"))])
    with pytest.raises(ValueError):
        store.apply([AddTaskExecution(_task("k1", "e1", "a"))])  # the id is taken
    node = store.get_node("t1", "a")
    assert node is not None and node.state == "ready"
    assert [t.id for t in store.workflows.list_tasks("p")] == ["k1"]


def test_a_superseded_workflow_traversal_is_stale(store: Store) -> None:
    _run(store, "e1", "t1")
    again = TraversalRecord(id="t2", kind="workflow", execution_id="e1", action="RERUN")
    store.start_traversal(again, [_node("t2", "a")], {"state": "RUNNING"})
    old = store.get_traversal("t1")
    assert old is not None and old.status == "SUPERSEDED"
    execution = store.workflows.get_execution("e1")
    assert execution is not None and execution.traversal_id == "t2"
    with pytest.raises(StaleTraversal):
        store.apply([UpdateNode("t1", "a", {"state": "done"})], traversal_id="t1")
    assert store.claim_ready("t1", "me", 5, T0 + timedelta(days=3650)) == []
    assert store.apply_many([("t1", []), ("t2", [])]) == [True, False]
    assert [t.id for t in store.active_traversals()] == ["t2"]
    with pytest.raises(NotFound):
        store.start_traversal(
            TraversalRecord(id="t3", kind="workflow", execution_id="nope", action="RUN"), [], {}
        )


def test_a_traversal_must_name_the_owner_of_its_kind(store: Store) -> None:
    with pytest.raises(ValueError, match="execution_id"):
        store.start_traversal(TraversalRecord(id="t", kind="workflow", action="RUN"), [], {})
    with pytest.raises(ValueError, match="stack_id"):
        store.start_traversal(TraversalRecord(id="t", execution_id="e", action="RUN"), [], {})
    with pytest.raises(ValueError, match="kind"):
        store.start_traversal(TraversalRecord(id="t", kind="job", stack_id="s", action="X"), [], {})
    with pytest.raises(ValueError, match="not a workflow traversal"):
        store.workflows.create_execution(
            _execution("e1"), traversal=TraversalRecord(id="t", stack_id="s", action="RUN")
        )
    assert store.workflows.get_execution("e1") is None


def test_executions_list_update_and_delete_their_tree(store: Store) -> None:
    _run(store, "root", "t1")
    store.apply([AddTaskExecution(_task("k1", "root", "a", type="WORKFLOW"))])
    store.apply(
        [
            AddActionExecution(
                ActionExecutionRecord(id="x1", project="p", name="n", task_execution_id="k1")
            )
        ]
    )
    child = _execution("child", task_execution_id="k1", root_execution_id="root")
    traversal = TraversalRecord(id="t2", kind="workflow", execution_id="child", action="RUN")
    store.workflows.create_execution(child, traversal=traversal, nodes=[_node("t2", "a")])
    store.apply([AddTimer("t2", "a", T0), AddTaskExecution(_task("k2", "child", "a"))])
    store.workflows.create_execution(_execution("other", project="q"))
    assert [e.id for e in store.workflows.list_executions("p")] == ["root", "child"]
    assert [
        e.id for e in store.workflows.list_executions("p", filters={"root_execution_id": "root"})
    ] == ["child"]
    changed = store.workflows.update_execution("root", {"description": "nightly"})
    assert changed is not None and changed.description == "nightly"
    with pytest.raises(ValueError):
        store.workflows.create_execution(_execution("root"))
    assert store.workflows.delete_execution("root")
    assert store.workflows.list_executions(None) == [store.workflows.get_execution("other")]
    assert store.workflows.list_tasks(None) == []
    assert store.workflows.list_action_executions(None) == []
    assert store.get_traversal("t1") is None and store.get_traversal("t2") is None
    assert store.list_nodes("t2") == [] and store.next_timer_due() is None
    assert not store.workflows.delete_execution("root")


def test_an_action_runs_outside_any_workflow(store: Store) -> None:
    wfs = store.workflows
    wfs.create_action_execution(ActionExecutionRecord(id="x", project="p", name="std.noop"))
    found = wfs.get_action_execution("x")
    assert found is not None and found.task_execution_id is None and found.state == "RUNNING"
    with pytest.raises(NotFound):
        wfs.create_action_execution(
            ActionExecutionRecord(id="y", project="p", name="std.noop", task_execution_id="nope")
        )
    assert wfs.delete_action_execution("x") and wfs.get_action_execution("x") is None
